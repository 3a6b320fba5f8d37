#include "profiler/format/proto_profile.h"

#include <string.h>

#include "alloc/internal/hex_digit.h"
#include "alloc/sample_weight.h"
#include "profiler/format/elf_build_id.h"
#include "profiler/format/proto_strings.h"
#include "profiler/base/proto_wire.h"

namespace heapkit::prof {
namespace {

using Encoder = ProtoWire<MappedBytes>;

// profile.proto field numbers.
enum : int {
  kSampleType = 1,
  kSample = 2,
  kMapping = 3,
  kLocation = 4,
  kComment = 13,
  kTimeNanos = 9,
  kPeriodType = 11,
  kPeriod = 12,
  kDefaultSampleType = 14,
};
constexpr int kMaxFrames = 128;  // more than a dump's stacks have (kMaxCaptureDepth)
constexpr int kHeapValues = 4, kAllValues = 10;

// A line of text and a cursor over it.
struct Cursor {
  const char* p;
  const char* end;
  bool Done() const { return p >= end; }
  void Spaces() {
    while (p < end && *p == ' ') ++p;
  }
  bool Take(char c) {
    Spaces();
    if (p >= end || *p != c) return false;
    ++p;
    return true;
  }
  bool Starts(const char* prefix) const {
    const size_t n = strlen(prefix);
    return static_cast<size_t>(end - p) >= n && memcmp(p, prefix, n) == 0;
  }
  bool Decimal(int64_t* out) {
    Spaces();
    if (p >= end || *p < '0' || *p > '9') return false;
    int64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
    *out = v;
    return true;
  }
  bool Hex(uint64_t* out) {
    Spaces();
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    uint64_t v = 0;
    const char* start = p;
    for (; p < end; ++p) {
      const char c = *p;
      const int d = internal::HexDigitValue(c);
      if (d < 0) break;
      v = (v << 4) | static_cast<uint64_t>(d);
    }
    *out = v;
    return p > start;
  }
  int Pcs(uint64_t* pcs) {  // hex words up to the end or a '|'
    int n = 0;
    uint64_t pc;
    while (n < kMaxFrames && Hex(&pc)) pcs[n++] = pc;
    return n;
  }
};

struct MapEntry {
  uint64_t start, limit, offset;
};

// Lower bounds of the lifetime decades (object_times_dump.h) and their names.
const char* DecadeName(int64_t bin_ns) {
  static const char* const kNames[] = {"<1us",     "1us-10us",   "10us-100us", "100us-1ms",
                                       "1ms-10ms", "10ms-100ms", "100ms-1s",   "1s-10s",
                                       "10s-100s", "100s-1000s", "1000s-1h",   ">=1h"};
  if (bin_ns >= 3600000000000) return kNames[11];
  int i = 0;
  for (int64_t b = 1000; i < 10 && bin_ns >= b; b *= 10) ++i;
  return kNames[i];
}

int64_t Round(double v) { return static_cast<int64_t>(v + (v < 0 ? -0.5 : 0.5)); }

class ProtoBuilder {
 public:
  explicit ProtoBuilder(bool lifetimes) : values_(lifetimes ? kAllValues : kHeapValues) {}
  bool Build(const char* text, size_t size, MappedBytes* out);

 private:
  void ValueType(Encoder* out, int field, const char* type, const char* unit);
  bool Header(Cursor line);
  void Record(Cursor line);
  void Lifetime(Cursor line);
  void Comment(Cursor line);
  void MapsLine(Cursor line);
  void AddSample(const uint64_t* pcs, int n, const int64_t* values, Encoder* labels);
  void Label(Encoder* labels, const char* key, const char* str, int64_t num, const char* unit);
  uint64_t LocationId(uint64_t pc);
  void Finish(MappedBytes* out);

  const int values_;
  int64_t period_ = 1;
  int64_t time_nanos_ = 0;
  bool peak_time_ = false;
  ProtoStrings strings_;
  Encoder samples_, mappings_, locations_, comments_, scratch_;
  MappedBytes map_entries_;  // MapEntry per mapping id - 1
  MappedBytes path_buffer_;  // a maps line's path, NUL-terminated
  MappedBytes pc_ids_;       // open addressing: {pc, id} pairs
  size_t pc_slots_ = 0, pc_count_ = 0;
  int64_t pairs_ = 0;  // callstack-pair-ids handed out (Lifetime)
};

void ProtoBuilder::ValueType(Encoder* out, int field, const char* type, const char* unit) {
  Encoder v;
  v.Int64(1, strings_.Index(type));
  v.Int64(2, strings_.Index(unit));
  out->Message(field, v);
}

// "heap profile: ... @ heap_v2/<R>" or "@ heapprofile".
bool ProtoBuilder::Header(Cursor line) {
  if (!line.Starts("heap profile:")) return false;
  const char* at = line.end;
  while (at > line.p && at[-1] != '@') --at;
  Cursor kind{at, line.end};
  kind.Spaces();
  if (kind.Starts("heap_v2/")) {
    kind.p += 8;
    if (!kind.Decimal(&period_) || period_ < 1) period_ = 1;
  }
  return true;
}

void ProtoBuilder::Label(Encoder* labels, const char* key, const char* str, int64_t num,
                         const char* unit) {
  Encoder label;
  label.Int64(1, strings_.Index(key));
  if (str != nullptr) label.Int64(2, strings_.Index(str));
  label.Int64(3, num);
  if (unit != nullptr) label.Int64(4, strings_.Index(unit));
  labels->Message(3, label);
}

void ProtoBuilder::AddSample(const uint64_t* pcs, int n, const int64_t* values, Encoder* labels) {
  scratch_.Clear();
  uint64_t ids[kMaxFrames];
  for (int i = 0; i < n; ++i) ids[i] = LocationId(pcs[i]);
  struct Range {
    const uint64_t* b;
    const uint64_t* e;
    const uint64_t* begin() const { return b; }
    const uint64_t* end() const { return e; }
  };
  scratch_.PackedVarints(1, Range{ids, ids + n});
  struct Values {
    const int64_t* b;
    const int64_t* e;
    const int64_t* begin() const { return b; }
    const int64_t* end() const { return e; }
  };
  // Every value, zeros included: a packed field has one entry per sample type.
  scratch_.PackedInt64s(2, Values{values, values + values_});
  if (labels != nullptr) scratch_.data().append(labels->data().data(), labels->data().size());
  samples_.Message(kSample, scratch_);
}

uint64_t ProtoBuilder::LocationId(uint64_t pc) {
  if ((pc_count_ + 1) * 2 > pc_slots_) {  // grow and rehash
    const size_t n = pc_slots_ == 0 ? 4096 : pc_slots_ * 2;
    MappedBytes grown;
    if (!grown.Reserve(n * 16)) return 0;
    memset(grown.data(), 0, n * 16);
    auto* to = reinterpret_cast<uint64_t*>(grown.data());
    const auto* from = reinterpret_cast<const uint64_t*>(pc_ids_.data());
    for (size_t i = 0; i < pc_slots_; ++i) {
      if (from[2 * i + 1] == 0) continue;
      size_t at = (from[2 * i] * 0x9e3779b97f4a7c15ull >> 20) & (n - 1);
      while (to[2 * at + 1] != 0) at = (at + 1) & (n - 1);
      to[2 * at] = from[2 * i];
      to[2 * at + 1] = from[2 * i + 1];
    }
    pc_ids_.clear();
    pc_ids_.append(grown.data(), n * 16);
    pc_slots_ = n;
  }
  auto* slots = reinterpret_cast<uint64_t*>(pc_ids_.data());
  size_t at = (pc * 0x9e3779b97f4a7c15ull >> 20) & (pc_slots_ - 1);
  for (; slots[2 * at + 1] != 0; at = (at + 1) & (pc_slots_ - 1)) {
    if (slots[2 * at] == pc) return slots[2 * at + 1];
  }
  const uint64_t id = ++pc_count_;
  slots[2 * at] = pc;
  slots[2 * at + 1] = id;
  Encoder location;
  location.Varint(1, id);
  const auto* maps = reinterpret_cast<const MapEntry*>(map_entries_.data());
  const size_t map_count = map_entries_.size() / sizeof(MapEntry);
  for (size_t m = 0; m < map_count; ++m) {
    if (pc >= maps[m].start && pc < maps[m].limit) {
      location.Varint(2, m + 1);
      break;
    }
  }
  // The call instruction, as Go writes addresses: readers look it up as it is (pprof-tool adds
  // the 1 back, so its samples keep the legacy file's return addresses).
  location.Varint(3, pc > 0 ? pc - 1 : 0);
  locations_.Message(kLocation, location);
  return id;
}

// "  a:  b [  c:  d] @ 0x1 0x2"
void ProtoBuilder::Record(Cursor line) {
  int64_t inuse_n, inuse_b, alloc_n = 0, alloc_b = 0;
  if (!line.Decimal(&inuse_n) || !line.Take(':') || !line.Decimal(&inuse_b)) return;
  if (line.Take('[') &&
      (!line.Decimal(&alloc_n) || !line.Take(':') || !line.Decimal(&alloc_b) || !line.Take(']'))) {
    return;
  }
  if (!line.Take('@')) return;
  uint64_t pcs[kMaxFrames];
  const int n = line.Pcs(pcs);
  const double rate = static_cast<double>(period_);
  const alloc::Unsampled inuse = alloc::UnsampleLine(inuse_n, inuse_b, rate);
  const alloc::Unsampled allocated = alloc::UnsampleLine(alloc_n, alloc_b, rate);
  // Truncated like Go's runtime (scaleHeapSample): a reader's un-sampled value is never below
  // the file's, so a stack unchanged between two dumps never looks freed in pprof-tool --since.
  int64_t values[kAllValues] = {
      static_cast<int64_t>(allocated.count), static_cast<int64_t>(allocated.bytes),
      static_cast<int64_t>(inuse.count), static_cast<int64_t>(inuse.bytes)};
  const int64_t count = alloc_n > 0 ? alloc_n : inuse_n;
  const int64_t bytes = alloc_n > 0 ? alloc_b : inuse_b;
  Encoder labels;
  Label(&labels, "bytes", nullptr, count > 0 ? bytes / count : 0, nullptr);
  AddSample(pcs, n, values, &labels);
}

// "# heapkit: lifetime <bin ns> <same|cross|live> <count> <bytes> <est> @ <pcs> [| <pcs>]"
void ProtoBuilder::Lifetime(Cursor line) {
  line.p += strlen("# heapkit: lifetime ");
  int64_t bin_ns, count, bytes, estimated;
  if (!line.Decimal(&bin_ns)) return;
  line.Spaces();
  const bool live = line.Starts("live"), same = line.Starts("same");
  while (line.p < line.end && *line.p != ' ') ++line.p;
  if (!line.Decimal(&count) || !line.Decimal(&bytes) || !line.Decimal(&estimated) ||
      !line.Take('@')) {
    return;
  }
  uint64_t pcs[kMaxFrames];
  const int n = line.Pcs(pcs);
  const int64_t objects = bytes > 0
                              ? Round(static_cast<double>(count) * static_cast<double>(estimated) /
                                      static_cast<double>(bytes))
                              : count;
  // The free's stack, when the line has one: then the line becomes a pair of samples, as
  // tcmalloc's lifetime profiles write stack pairs: allocated_* on the allocation stack,
  // deallocated_* on the free stack, both labelled with the same callstack-pair-id, so that a
  // reader shows where the bytes were freed by its own symbolization (sample index
  // deallocated_space) and can join the two.
  uint64_t free_pcs[kMaxFrames];
  int free_n = 0;
  if (!live && line.Take('|')) free_n = line.Pcs(free_pcs);
  const int64_t pair = free_n > 0 ? ++pairs_ : 0;
  auto labels_for = [&](Encoder* labels) {
    Label(labels, "lifetime", DecadeName(bin_ns), 0, nullptr);
    Label(labels, "lifetime_ns", nullptr, bin_ns, "nanoseconds");
    if (!live) Label(labels, "same_thread", same ? "true" : "false", 0, nullptr);
    if (pair != 0) Label(labels, "callstack-pair-id", nullptr, pair, "count");
  };
  int64_t values[kAllValues] = {0, 0, 0, 0, objects, estimated};
  if (live) {
    values[8] = objects;
    values[9] = estimated;
  } else if (pair == 0) {
    values[6] = objects;
    values[7] = estimated;
  }
  Encoder labels;
  labels_for(&labels);
  AddSample(pcs, n, values, &labels);
  if (pair == 0) return;
  int64_t freed[kAllValues] = {};
  freed[6] = objects;
  freed[7] = estimated;
  Encoder free_labels;
  labels_for(&free_labels);
  AddSample(free_pcs, free_n, freed, &free_labels);
}

// Seconds with a fraction ("1795718736.075") at the cursor, as nanoseconds.
int64_t ReadUnixNanos(Cursor c) {
  int64_t seconds = 0, fraction = 0;
  if (!c.Decimal(&seconds)) return 0;
  int64_t scale = 1000000000;
  if (c.p < c.end && *c.p == '.') {
    for (++c.p; c.p < c.end && *c.p >= '0' && *c.p <= '9' && scale > 1; ++c.p) {
      scale /= 10;
      fraction += (*c.p - '0') * scale;
    }
  }
  return seconds * 1000000000 + fraction;
}

void ProtoBuilder::Comment(Cursor line) {
  comments_.Int64(kComment, strings_.Append(line.p, static_cast<size_t>(line.end - line.p)));
  if (line.Starts("# heapkit: dump time: ") && !peak_time_) {
    time_nanos_ = ReadUnixNanos(Cursor{line.p + strlen("# heapkit: dump time: "), line.end});
  } else if (line.Starts("# heapkit: dump reason: peak profile")) {
    for (const char* p = line.p; p + 10 <= line.end; ++p) {
      if (memcmp(p, "unix time ", 10) == 0) {
        time_nanos_ = ReadUnixNanos(Cursor{p + 10, line.end});
        peak_time_ = true;
        break;
      }
    }
  }
}

// "start-limit perms offset dev inode   path": executable file mappings become Mappings.
void ProtoBuilder::MapsLine(Cursor line) {
  MapEntry e;
  if (!line.Hex(&e.start) || !line.Take('-') || !line.Hex(&e.limit)) return;
  line.Spaces();
  if (line.end - line.p < 4 || line.p[2] != 'x') return;
  line.p += 4;
  uint64_t ignored;
  if (!line.Hex(&e.offset)) return;
  line.Spaces();
  while (line.p < line.end && *line.p != ' ') ++line.p;  // dev
  if (!line.Hex(&ignored)) return;                       // inode
  line.Spaces();
  while (line.end > line.p && line.end[-1] == ' ') --line.end;
  const size_t path_size = static_cast<size_t>(line.end - line.p);
  if (path_size == 0 || *line.p != '/' || path_size >= 4096) return;
  map_entries_.append(reinterpret_cast<const char*>(&e), sizeof(e));
  char* path = path_buffer_.data();
  memcpy(path, line.p, path_size);
  path[path_size] = '\0';
  char build_id[128];
  ReadElfBuildIdHex(path, build_id, sizeof(build_id));
  Encoder mapping;
  mapping.Varint(1, map_entries_.size() / sizeof(MapEntry));
  mapping.Varint(2, e.start);
  mapping.Varint(3, e.limit);
  mapping.Varint(4, e.offset);
  mapping.Int64(5, strings_.Index(path, path_size));
  mapping.Int64(6, strings_.Index(build_id));
  mappings_.Message(kMapping, mapping);
}

Cursor NextLine(const char** at, const char* end) {
  const char* start = *at;
  const char* nl = static_cast<const char*>(memchr(start, '\n', static_cast<size_t>(end - start)));
  const char* line_end = nl != nullptr ? nl : end;
  *at = nl != nullptr ? nl + 1 : end;
  return Cursor{start, line_end};
}

bool ProtoBuilder::Build(const char* text, size_t size, MappedBytes* out) {
  const char* end = text + size;
  const char* at = text;
  if (!path_buffer_.Reserve(4096) || !Header(NextLine(&at, end))) return false;
  const char* body = at;
  const char* maps = end;  // the first line after MAPPED_LIBRARIES:
  while (at < end) {
    if (NextLine(&at, end).Starts("MAPPED_LIBRARIES:")) {
      maps = at;
      break;
    }
  }
  for (at = maps; at < end;) {  // mappings first: locations name them
    Cursor line = NextLine(&at, end);
    if (!line.Starts("#")) MapsLine(line);
  }
  for (at = body; at < end;) {
    Cursor line = NextLine(&at, end);
    if (line.Starts("MAPPED_LIBRARIES:")) break;
    if (line.Starts("# heapkit: lifetime ") && values_ == kAllValues) Lifetime(line);
    if (line.Starts("#")) {
      Comment(line);
    } else {
      Record(line);
    }
  }
  for (at = maps; at < end;) {
    Cursor line = NextLine(&at, end);
    if (line.Starts("#")) Comment(line);
  }
  Finish(out);
  return !out->failed() && !strings_.failed() && !samples_.data().failed() &&
         !locations_.data().failed() && !pc_ids_.failed();
}

void ProtoBuilder::Finish(MappedBytes* out) {
  Encoder head;
  static const char* const kTypes[kAllValues][2] = {{"alloc_objects", "count"},
                                                    {"alloc_space", "bytes"},
                                                    {"inuse_objects", "count"},
                                                    {"inuse_space", "bytes"},
                                                    {"allocated_objects", "count"},
                                                    {"allocated_space", "bytes"},
                                                    {"deallocated_objects", "count"},
                                                    {"deallocated_space", "bytes"},
                                                    {"censored_allocated_objects", "count"},
                                                    {"censored_allocated_space", "bytes"}};
  for (int i = 0; i < values_; ++i) ValueType(&head, kSampleType, kTypes[i][0], kTypes[i][1]);
  Encoder tail;
  tail.Int64(kTimeNanos, time_nanos_);
  ValueType(&tail, kPeriodType, "space", "bytes");
  tail.Int64(kPeriod, period_);
  tail.Int64(kDefaultSampleType, strings_.Index("inuse_space"));
  const Encoder* parts[] = {&head,      &samples_, &mappings_, &locations_, &strings_.table(),
                            &comments_, &tail};
  for (const Encoder* part : parts) {
    out->append(part->data().data(), part->data().size());
  }
}

}  // namespace

bool LegacyTextToProto(const char* text, size_t size, MappedBytes* out) {
  static const char kLifetime[] = "\n# heapkit: lifetime ";
  const bool lifetimes = memmem(text, size, kLifetime, sizeof(kLifetime) - 1) != nullptr;
  // The builder's members are small (their buffers are mmap'ed): the stack suffices.
  ProtoBuilder builder(lifetimes);
  return builder.Build(text, size, out);
}

}  // namespace heapkit::prof
