#include "profiler/http/proto_encoder.h"

namespace heapkit::prof::http {

void ProtoEncoder::AppendVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void ProtoEncoder::Tag(int field, int wire_type) {
  AppendVarint(&data_, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void ProtoEncoder::Varint(int field, uint64_t value) {
  if (value == 0) return;
  Tag(field, 0);
  AppendVarint(&data_, value);
}

void ProtoEncoder::Bytes(int field, std::string_view value, bool always) {
  if (value.empty() && !always) return;
  Tag(field, 2);
  AppendVarint(&data_, value.size());
  data_.append(value.data(), value.size());
}

void ProtoEncoder::PackedVarints(int field, const std::vector<uint64_t>& values) {
  if (values.empty()) return;
  std::string packed;
  for (uint64_t v : values) AppendVarint(&packed, v);
  Bytes(field, packed, true);
}

void ProtoEncoder::PackedInt64s(int field, const std::vector<int64_t>& values) {
  if (values.empty()) return;
  std::string packed;
  for (int64_t v : values) AppendVarint(&packed, static_cast<uint64_t>(v));
  Bytes(field, packed, true);
}

}  // namespace heapkit::prof::http
