// profile.proto's string table for the runtime's profile files (proto_profile.h), without
// malloc: each distinct string gets the next index (0 is ""), and its string_table entry is
// encoded at once into table(), which the profile writes after everything that refers to it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/format/mapped_bytes.h"
#include "profiler/base/proto_wire.h"

namespace heapkit::prof {

class ProtoStrings {
 public:
  ProtoStrings();
  int64_t Index(const char* s, size_t n);
  int64_t Index(const char* s);
  // A new index for a string that is not looked up again (a comment line): no hashing.
  int64_t Append(const char* s, size_t n);
  // The encoded string_table fields (Profile field 6), in index order.
  const ProtoWire<MappedBytes>& table() const { return table_; }
  bool failed() const { return table_.data().failed() || spans_.failed() || slots_.failed(); }

 private:
  struct Span {
    size_t offset;  // of the string's bytes in table_
    size_t size;
    uint64_t hash;
  };
  bool Grow();

  ProtoWire<MappedBytes> table_;
  MappedBytes spans_;  // Span per index
  MappedBytes slots_;  // open addressing: uint32 index + 1 per slot, 0 empty
  size_t count_ = 0;   // strings
  size_t hashed_ = 0;  // of them in slots_
  size_t slot_count_ = 0;
};

}  // namespace heapkit::prof
