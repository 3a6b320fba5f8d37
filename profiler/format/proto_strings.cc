#include "profiler/format/proto_strings.h"

#include <string.h>

namespace heapkit::prof {
namespace {

uint64_t HashBytes(const char* s, size_t n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ull;
  return h;
}

}  // namespace

ProtoStrings::ProtoStrings() { Index("", 0); }

int64_t ProtoStrings::Index(const char* s) { return Index(s, strlen(s)); }

bool ProtoStrings::Grow() {
  const size_t n = slot_count_ == 0 ? 1024 : slot_count_ * 2;
  MappedBytes grown;
  if (!grown.Reserve(n * sizeof(uint32_t))) return false;
  memset(grown.data(), 0, n * sizeof(uint32_t));
  auto* slots = reinterpret_cast<uint32_t*>(grown.data());
  const auto* spans = reinterpret_cast<const Span*>(spans_.data());
  for (size_t i = 0; i < count_; ++i) {
    if (spans[i].hash == 0) continue;  // Append()ed: never looked up
    size_t at = spans[i].hash & (n - 1);
    while (slots[at] != 0) at = (at + 1) & (n - 1);
    slots[at] = static_cast<uint32_t>(i + 1);
  }
  slots_.clear();
  slots_.append(grown.data(), n * sizeof(uint32_t));
  slot_count_ = n;
  return !slots_.failed();
}

int64_t ProtoStrings::Append(const char* s, size_t n) {
  table_.Bytes(6, s, n, true);
  const Span span{table_.data().size() - n, n, 0};
  spans_.append(reinterpret_cast<const char*>(&span), sizeof(span));
  return failed() ? 0 : static_cast<int64_t>(count_++);
}

int64_t ProtoStrings::Index(const char* s, size_t n) {
  if ((hashed_ + 1) * 2 > slot_count_ && !Grow()) return 0;
  auto* slots = reinterpret_cast<uint32_t*>(slots_.data());
  const uint64_t hash = HashBytes(s, n) | 1;  // 0 marks Append()ed strings
  size_t at = hash & (slot_count_ - 1);
  for (; slots[at] != 0; at = (at + 1) & (slot_count_ - 1)) {
    const Span& span = reinterpret_cast<const Span*>(spans_.data())[slots[at] - 1];
    if (span.hash == hash && span.size == n &&
        memcmp(table_.data().data() + span.offset, s, n) == 0) {
      return slots[at] - 1;
    }
  }
  table_.Bytes(6, s, n, true);
  const Span span{table_.data().size() - n, n, hash};
  spans_.append(reinterpret_cast<const char*>(&span), sizeof(span));
  if (failed()) return 0;
  slots[at] = static_cast<uint32_t>(count_ + 1);
  ++hashed_;
  return static_cast<int64_t>(count_++);
}

}  // namespace heapkit::prof
