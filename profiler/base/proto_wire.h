// The protocol-buffers wire encoder shared by everything in heapkit that writes profile.proto:
// the live HTTP endpoint (profiler/http, on std::string) and the runtime's profile files
// (proto_profile.h, on MappedBytes: no malloc). Just what profile.proto needs: varints, packed
// repeated varints, length-delimited strings and nested messages. No libprotobuf; the tests
// decode what it writes with go pprof's and libprotobuf's decoders.
//
// `Buffer` is any byte container with append(const char*, size_t), push_back(char), data(),
// size() and clear(). Header-only and libc-only, so the runtime (no C++ library) can use it.
// Nested messages are written into their own encoder and appended with a length prefix
// (Message), so nothing is patched afterwards.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

template <class Buffer>
class ProtoWire {
 public:
  // Field with wire type 0; zero values are skipped as proto3 does.
  void Varint(int field, uint64_t value) {
    if (value == 0) return;
    Tag(field, 0);
    AppendVarint(value);
  }
  void Int64(int field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Bool(int field, bool value) { Varint(field, value ? 1 : 0); }
  // Wire type 2. Empty values are written only when `always` (string_table[0] must exist).
  void Bytes(int field, const char* value, size_t size, bool always = false) {
    if (size == 0 && !always) return;
    Tag(field, 2);
    AppendVarint(size);
    data_.append(value, size);
  }
  template <class Text>  // std::string, std::string_view: anything with data() and size()
  void Bytes(int field, const Text& value, bool always = false) {
    Bytes(field, value.data(), value.size(), always);
  }
  void Message(int field, const ProtoWire& message) {
    Bytes(field, message.data_.data(), message.data_.size(), true);
  }
  // A packed repeated varint field of any range of integers (nothing when empty).
  template <class Range>
  void PackedVarints(int field, const Range& values) {
    size_t length = 0;
    for (auto v : values) length += VarintSize(static_cast<uint64_t>(v));
    if (length == 0) return;
    Tag(field, 2);
    AppendVarint(length);
    for (auto v : values) AppendVarint(static_cast<uint64_t>(v));
  }
  template <class Range>
  void PackedInt64s(int field, const Range& values) {
    PackedVarints(field, values);
  }

  const Buffer& data() const { return data_; }
  Buffer& data() { return data_; }
  void Clear() { data_.clear(); }

 private:
  static size_t VarintSize(uint64_t value) {
    size_t n = 1;
    for (; value >= 0x80; value >>= 7) ++n;
    return n;
  }
  void Tag(int field, int wire_type) {
    AppendVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
  }
  void AppendVarint(uint64_t value) {
    for (; value >= 0x80; value >>= 7) data_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    data_.push_back(static_cast<char>(value));
  }

  Buffer data_;
};

}  // namespace heapkit::prof
