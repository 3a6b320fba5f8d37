// Malloc-free buffered output for profile text.
//
// OutputSink owns a 64 KiB buffer obtained with mmap (never on the stack: dumps may run on
// threads with small stacks) and hands full buffers to Drain(). There is no size limit: a dump
// of any number of buckets streams through the buffer (gperftools used one fixed 1 MiB buffer
// and silently dropped what did not fit). Errors are sticky: after a failed Drain every Append
// is a no-op and ok() is false.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

class OutputSink {
 public:
  static constexpr size_t kBufferSize = 64 * 1024;

  OutputSink();
  virtual ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  void Append(const char* data, size_t n);
  void Append(const char* s);
  void AppendChar(char c) {
    if (len_ < kBufferSize && buffer_ != nullptr) {
      buffer_[len_++] = c;
    } else {
      Append(&c, 1);
    }
  }
  // Decimal, right-aligned in at least `width` columns (spaces), like printf("%*lld").
  void AppendDecimal(int64_t value, int width = 0);
  // "0x" + lowercase hex, zero-padded to `digits` hex digits.
  void AppendHex(uint64_t value, int digits = 0);

  // Hands everything buffered to Drain(). False if any drain failed.
  bool Flush();
  bool ok() const { return ok_; }
  uint64_t bytes_written() const { return total_ + len_; }

 protected:
  // Consumes [data, data+n). Returns false on error.
  virtual bool Drain(const char* data, size_t n) = 0;

 private:
  char* buffer_;
  size_t len_ = 0;
  uint64_t total_ = 0;
  bool ok_;
};

// Writes to a file descriptor (write(2), retrying short writes and EINTR). With a byte limit
// (the process's RLIMIT_FSIZE, see LimitToFileSizeRlimit) it fails with EFBIG instead of
// writing past it: the kernel would send SIGXFSZ, which kills the program by default.
class FdSink final : public OutputSink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  ~FdSink() override { Flush(); }
  int error() const { return error_; }
  // Caps the file at the soft RLIMIT_FSIZE (nothing to do when unlimited). `offset` is the
  // descriptor's current file offset.
  void LimitToFileSizeRlimit(uint64_t offset = 0);

 protected:
  bool Drain(const char* data, size_t n) override;

 private:
  int fd_;
  int error_ = 0;
  uint64_t room_ = UINT64_MAX;  // bytes that may still be written
};

// Collects everything in a growable mmap'ed region (for GetHeapProfile / GetHeapSample).
class MemorySink final : public OutputSink {
 public:
  MemorySink() = default;
  ~MemorySink() override;
  // After Flush(): the collected bytes (not NUL-terminated).
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 protected:
  bool Drain(const char* data, size_t n) override;

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Forwards each drained chunk to a callback (for MallocExtension's string writers).
class CallbackSink final : public OutputSink {
 public:
  using Callback = void (*)(void* ctx, const char* data, size_t n);
  CallbackSink(Callback cb, void* ctx) : cb_(cb), ctx_(ctx) {}
  ~CallbackSink() override { Flush(); }

 protected:
  bool Drain(const char* data, size_t n) override {
    cb_(ctx_, data, n);
    return true;
  }

 private:
  Callback cb_;
  void* ctx_;
};

}  // namespace heapkit::prof
