// A growable byte buffer in mmap'ed memory (internal::SystemAlloc): a container the runtime can
// use where malloc is not allowed (a dump may run inside an allocation's sampling callback).
// The first 256 bytes are kept inline, so the many small nested messages of a profile cost no
// system call (an mmap per label was 90 % of a 16k-stack profile's conversion time). It has
// the std::string members the shared proto encoder needs (proto_wire.h). Out of memory
// is sticky: later appends are dropped and failed() is true.
//
// MappedArena hands out blocks of one growing set of mappings, released together (for zlib's
// working memory in proto_profile_file.cc).
#pragma once

#include <cstddef>

namespace heapkit::prof {

class MappedBytes {
 public:
  MappedBytes() : data_(inline_) {}
  ~MappedBytes();
  MappedBytes(const MappedBytes&) = delete;
  MappedBytes& operator=(const MappedBytes&) = delete;

  void append(const char* data, size_t n);
  void push_back(char c) {
    if (size_ < capacity_) {
      data_[size_++] = c;
    } else {
      append(&c, 1);
    }
  }
  const char* data() const { return data_; }
  char* data() { return data_; }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // Makes room for n more bytes; false (and failed()) if the memory cannot be had.
  bool Reserve(size_t n);
  bool failed() const { return failed_; }

 private:
  char* data_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  bool failed_ = false;
  static constexpr size_t kInline = 256;
  // Aligned as mmap'd memory is for what callers keep in it (ProtoStrings' spans, slot tables):
  // after the bool above it would start at an odd address.
  alignas(16) char inline_[kInline];
};

class MappedArena {
 public:
  MappedArena() = default;
  ~MappedArena();
  MappedArena(const MappedArena&) = delete;
  MappedArena& operator=(const MappedArena&) = delete;
  // 16-byte aligned, zeroed; nullptr when out of memory or blocks.
  void* Allocate(size_t bytes);

 private:
  static constexpr int kMaxBlocks = 64;
  struct Block {
    char* start;
    size_t size;
  };
  Block blocks_[kMaxBlocks] = {};
  int count_ = 0;
  size_t used_ = 0;  // in the last block
};

}  // namespace heapkit::prof
