// A minimal protocol-buffers wire encoder: just what profile.proto needs (varints, packed
// repeated varints, length-delimited strings and nested messages). The runtime does not link
// libprotobuf; the tests decode what this writes with go pprof's and protoc's decoders.
//
// Nested messages are written into their own encoder and appended with a length prefix
// (Message), so nothing is patched afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::prof::http {

class ProtoEncoder {
 public:
  // Field with wire type 0; zero values are skipped as proto3 does.
  void Varint(int field, uint64_t value);
  void Int64(int field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Bool(int field, bool value) { Varint(field, value ? 1 : 0); }
  // Wire type 2. Empty strings are written only when `always` (string_table[0] must exist).
  void Bytes(int field, std::string_view value, bool always = false);
  void Message(int field, const ProtoEncoder& message) { Bytes(field, message.data_, true); }
  // A packed repeated varint field (nothing when empty).
  void PackedVarints(int field, const std::vector<uint64_t>& values);
  void PackedInt64s(int field, const std::vector<int64_t>& values);

  const std::string& data() const { return data_; }
  void Clear() { data_.clear(); }

 private:
  void Tag(int field, int wire_type);
  static void AppendVarint(std::string* out, uint64_t value);

  std::string data_;
};

}  // namespace heapkit::prof::http
