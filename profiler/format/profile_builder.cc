#include "profiler/format/profile_builder.h"

#include <string.h>

namespace heapkit::prof {
namespace {

// profile.proto field numbers.
enum : int {
  kSampleType = 1,
  kSample = 2,
  kMapping = 3,
  kLocation = 4,
  kFunction = 5,
  kTimeNanos = 9,
  kDurationNanos = 10,
  kPeriodType = 11,
  kPeriod = 12,
  kComment = 13,
  kDefaultSampleType = 14,
};

template <class T>
struct Span {
  const T* b;
  const T* e;
  const T* begin() const { return b; }
  const T* end() const { return e; }
};

uint64_t Mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x9e3779b97f4a7c15ull; }

// Open addressing over `words`-word slots whose last word is the id (0: empty), doubled when
// half full. `slots` is the slot count (a power of two). false when memory ran out.
bool GrowSlots(MappedBytes* table, size_t* slots, size_t count, size_t words,
               uint64_t (*hash)(const uint64_t* key)) {
  if ((count + 1) * 2 <= *slots) return true;
  const size_t n = *slots == 0 ? 4096 : *slots * 2;
  const size_t slot_bytes = words * sizeof(uint64_t);
  MappedBytes grown;
  if (!grown.Reserve(n * slot_bytes)) return false;
  memset(grown.data(), 0, n * slot_bytes);
  auto* to = reinterpret_cast<uint64_t*>(grown.data());
  const auto* from = reinterpret_cast<const uint64_t*>(table->data());
  for (size_t i = 0; i < *slots; ++i) {
    const uint64_t* slot = from + i * words;
    if (slot[words - 1] == 0) continue;
    size_t at = (hash(slot) >> 20) & (n - 1);
    while (to[at * words + words - 1] != 0) at = (at + 1) & (n - 1);
    memcpy(to + at * words, slot, slot_bytes);
  }
  table->clear();
  table->append(grown.data(), n * slot_bytes);
  *slots = n;
  return !table->failed();
}

uint64_t PcHash(const uint64_t* key) { return Mix(0, key[0]); }

constexpr size_t kFunctionWords = 5;  // name, system name, file, start line, id
uint64_t FunctionHash(const uint64_t* key) {
  return Mix(Mix(Mix(Mix(0, key[0]), key[1]), key[2]), key[3]);
}

}  // namespace

ProfileBuilder::ProfileBuilder(const ProfileValueType* types, int type_count)
    : types_(types), type_count_(type_count < kMaxValues ? type_count : kMaxValues) {}

void ProfileBuilder::ValueType(Encoder* out, int field, const char* type, const char* unit) {
  Encoder v;
  v.Int64(1, strings_.Index(type));
  v.Int64(2, strings_.Index(unit));
  out->Message(field, v);
}

void ProfileBuilder::AddMapping(uint64_t start, uint64_t limit, uint64_t offset, const char* path,
                                const char* build_id) {
  const Mapping m{start, limit, offset, strings_.Index(path), strings_.Index(build_id), false};
  mappings_.append(reinterpret_cast<const char*>(&m), sizeof(m));
}

void ProfileBuilder::AddSample(const uint64_t* pcs, int depth, const int64_t* values,
                               const ProfileLabel* labels, int label_count) {
  if (depth > kMaxFrames) depth = kMaxFrames;
  uint64_t ids[kMaxFrames];
  for (int i = 0; i < depth; ++i) ids[i] = LocationId(pcs[i]);
  scratch_.Clear();
  scratch_.PackedVarints(1, Span<uint64_t>{ids, ids + depth});
  // Every value, zeros included: a packed field has one entry per sample type.
  scratch_.PackedInt64s(2, Span<int64_t>{values, values + type_count_});
  for (int i = 0; i < label_count; ++i) {
    const ProfileLabel& l = labels[i];
    Encoder label;
    label.Int64(1, strings_.Index(l.key));
    if (l.str != nullptr) label.Int64(2, strings_.Index(l.str));
    label.Int64(3, l.num);
    if (l.unit != nullptr) label.Int64(4, strings_.Index(l.unit));
    scratch_.Message(3, label);
  }
  samples_.Message(kSample, scratch_);
}

void ProfileBuilder::AddComment(const char* text, size_t size) {
  comments_.Int64(kComment, strings_.Append(text, size));
}

void ProfileBuilder::SetPeriod(const char* type, const char* unit, int64_t period) {
  period_type_ = type;
  period_unit_ = unit;
  period_ = period;
}

uint64_t ProfileBuilder::LocationId(uint64_t pc) {
  if (!GrowSlots(&location_ids_, &location_slots_, location_count_, 2, &PcHash)) {
    failed_ = true;
    return 0;
  }
  auto* slots = reinterpret_cast<uint64_t*>(location_ids_.data());
  size_t at = (PcHash(&pc) >> 20) & (location_slots_ - 1);
  for (; slots[2 * at + 1] != 0; at = (at + 1) & (location_slots_ - 1)) {
    if (slots[2 * at] == pc) return slots[2 * at + 1];
  }
  const uint64_t id = ++location_count_;
  slots[2 * at] = pc;
  slots[2 * at + 1] = id;
  Encoder location;
  location.Varint(1, id);
  auto* maps = reinterpret_cast<Mapping*>(mappings_.data());
  const size_t map_count = mappings_.size() / sizeof(Mapping);
  int mapping = -1;
  for (size_t m = 0; m < map_count; ++m) {
    if (pc >= maps[m].start && pc < maps[m].limit) {
      mapping = static_cast<int>(m);
      location.Varint(2, m + 1);
      break;
    }
  }
  const uint64_t address = pc > 0 ? pc - 1 : 0;  // the call instruction
  location.Varint(3, address);
  if (namer_.name != nullptr) NameLocation(address, mapping, &location);
  locations_.Message(kLocation, location);
  return id;
}

void ProfileBuilder::NameLocation(uint64_t address, int mapping, Encoder* location) {
  ProfileFrame frames[kMaxInlineFrames];
  const int n = namer_.name(namer_.ctx, address, frames, kMaxInlineFrames);
  if (n <= 0) {
    // The address alone, its mapping marked as not symbolized: a reader with the binary or
    // its debug file names it by the mapping's build ID.
    if (mapping >= 0) reinterpret_cast<Mapping*>(mappings_.data())[mapping].unnamed = true;
    return;
  }
  for (int i = 0; i < n && i < kMaxInlineFrames; ++i) {
    Encoder line;
    line.Varint(1, FunctionId(frames[i]));
    line.Int64(2, frames[i].line);
    location->Message(4, line);
  }
}

uint64_t ProfileBuilder::FunctionId(const ProfileFrame& f) {
  const char* system = f.system_name != nullptr ? f.system_name : f.function;
  const uint64_t key[kFunctionWords] = {static_cast<uint64_t>(strings_.Index(f.function)),
                                        static_cast<uint64_t>(strings_.Index(system)),
                                        static_cast<uint64_t>(strings_.Index(f.file)),
                                        static_cast<uint64_t>(f.start_line), 0};
  if (!GrowSlots(&function_ids_, &function_slots_, function_count_, kFunctionWords,
                 &FunctionHash)) {
    failed_ = true;
    return 0;
  }
  auto* slots = reinterpret_cast<uint64_t*>(function_ids_.data());
  size_t at = (FunctionHash(key) >> 20) & (function_slots_ - 1);
  for (;; at = (at + 1) & (function_slots_ - 1)) {
    uint64_t* slot = slots + at * kFunctionWords;
    if (slot[kFunctionWords - 1] == 0) break;
    if (memcmp(slot, key, (kFunctionWords - 1) * sizeof(uint64_t)) == 0) {
      return slot[kFunctionWords - 1];
    }
  }
  const uint64_t id = ++function_count_;
  memcpy(slots + at * kFunctionWords, key, sizeof(key));
  slots[at * kFunctionWords + kFunctionWords - 1] = id;
  Encoder function;
  function.Varint(1, id);
  function.Varint(2, key[0]);
  function.Varint(3, key[1]);
  function.Varint(4, key[2]);
  function.Int64(5, f.start_line);
  functions_.Message(kFunction, function);
  return id;
}

bool ProfileBuilder::Finish(MappedBytes* out) {
  Encoder head;
  for (int i = 0; i < type_count_; ++i) {
    ValueType(&head, kSampleType, types_[i].type, types_[i].unit);
  }
  Encoder mappings;
  const auto* maps = reinterpret_cast<const Mapping*>(mappings_.data());
  const size_t map_count = mappings_.size() / sizeof(Mapping);
  for (size_t m = 0; m < map_count; ++m) {
    Encoder mapping;
    mapping.Varint(1, m + 1);
    mapping.Varint(2, maps[m].start);
    mapping.Varint(3, maps[m].limit);
    mapping.Varint(4, maps[m].offset);
    mapping.Int64(5, maps[m].path);
    mapping.Int64(6, maps[m].build_id);
    // has_functions, has_filenames, has_line_numbers, has_inline_frames: all true when every
    // location of the mapping was named here (go pprof symbolizes a mapping only when the
    // first three are false, and then every location of it).
    const bool named = namer_.name != nullptr && !maps[m].unnamed;
    for (int field = 7; field <= 10; ++field) mapping.Bool(field, named);
    mappings.Message(kMapping, mapping);
  }
  Encoder tail;
  tail.Int64(kTimeNanos, time_nanos_);
  tail.Int64(kDurationNanos, duration_nanos_);
  if (period_type_ != nullptr) ValueType(&tail, kPeriodType, period_type_, period_unit_);
  tail.Int64(kPeriod, period_);
  if (default_type_ != nullptr) tail.Int64(kDefaultSampleType, strings_.Index(default_type_));
  const Encoder* parts[] = {&head,       &samples_,         &mappings,  &locations_,
                            &functions_, &strings_.table(), &comments_, &tail};
  for (const Encoder* part : parts) out->append(part->data().data(), part->data().size());
  return !failed_ && !out->failed() && !strings_.failed() && !samples_.data().failed() &&
         !locations_.data().failed() && !functions_.data().failed() && !mappings_.failed() &&
         !comments_.data().failed() && !mappings.data().failed();
}

}  // namespace heapkit::prof
