#include "profiler/format/output_sink.h"

#include <cerrno>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc/internal/system_memory.h"

namespace heapkit::prof {

OutputSink::OutputSink()
    : buffer_(static_cast<char*>(internal::SystemAlloc(kBufferSize, 0))), ok_(buffer_ != nullptr) {}

OutputSink::~OutputSink() {
  if (buffer_ != nullptr) internal::SystemFree(buffer_, kBufferSize);
}

void OutputSink::Append(const char* data, size_t n) {
  if (!ok_) return;
  while (n > 0) {
    if (len_ == kBufferSize && !Flush()) return;
    size_t take = kBufferSize - len_;
    if (take > n) take = n;
    memcpy(buffer_ + len_, data, take);
    len_ += take;
    data += take;
    n -= take;
  }
}

void OutputSink::Append(const char* s) { Append(s, strlen(s)); }

void OutputSink::AppendDecimal(int64_t value, int width) {
  char digits[24];
  int n = 0;
  uint64_t v = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (value < 0) digits[n++] = '-';
  for (int pad = width - n; pad > 0; --pad) AppendChar(' ');
  while (n > 0) AppendChar(digits[--n]);
}

void OutputSink::AppendHex(uint64_t value, int digits) {
  // Filled from the end, appended in one call (stack profiles write hundreds of thousands).
  char out[18];
  int at = sizeof out;
  int n = 0;
  do {
    out[--at] = "0123456789abcdef"[value & 15];
    value >>= 4;
    ++n;
  } while (value != 0);
  while (n < digits && n < 16) {
    out[--at] = '0';
    ++n;
  }
  out[--at] = 'x';
  out[--at] = '0';
  Append(out + at, sizeof out - at);
}

bool OutputSink::Flush() {
  if (!ok_) return false;
  if (len_ == 0) return true;
  if (!Drain(buffer_, len_)) ok_ = false;
  total_ += len_;
  len_ = 0;
  return ok_;
}

void FdSink::LimitToFileSizeRlimit(uint64_t offset) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  room_ = rl.rlim_cur > offset ? rl.rlim_cur - offset : 0;
}

bool FdSink::Drain(const char* data, size_t n) {
  bool too_big = false;
  if (n > room_) {
    n = static_cast<size_t>(room_);
    too_big = true;
  }
  room_ -= n;
  while (n > 0) {
    ssize_t w = write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  if (too_big) {
    error_ = EFBIG;
    return false;
  }
  return true;
}

MemorySink::~MemorySink() {
  if (data_ != nullptr) internal::SystemFree(data_, capacity_);
}

bool MemorySink::Drain(const char* data, size_t n) {
  if (size_ + n > capacity_) {
    size_t cap = capacity_ == 0 ? kBufferSize : capacity_;
    while (cap < size_ + n) cap *= 2;
    auto* grown = static_cast<char*>(internal::SystemAlloc(cap, 0));
    if (grown == nullptr) return false;
    if (data_ != nullptr) {
      memcpy(grown, data_, size_);
      internal::SystemFree(data_, capacity_);
    }
    data_ = grown;
    capacity_ = cap;
  }
  memcpy(data_ + size_, data, n);
  size_ += n;
  return true;
}

}  // namespace heapkit::prof
