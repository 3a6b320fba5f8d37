#include "profiler/http/heap_profile_proto.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "alloc/internal/hex_digit.h"
#include "profiler/symbolize/symbolizer.h"
#include "profiler/http/process_symbolizer.h"
#include "profiler/http/proto_encoder.h"
#include "alloc/sample_weight.h"

namespace heapkit::prof::http {
namespace {

struct Record {
  int64_t inuse_count, inuse_bytes, alloc_count, alloc_bytes;
  std::vector<uint64_t> pcs;
};

struct Parsed {
  int64_t period = 0;
  std::vector<Record> records;
  std::string_view maps;
};

std::string_view NextLine(std::string_view* text) {
  const size_t end = text->find('\n');
  std::string_view line = text->substr(0, end);
  text->remove_prefix(end == std::string_view::npos ? text->size() : end + 1);
  return line;
}

// Hand-rolled number readers: a 10,000-stack profile has hundreds of thousands of PCs, and
// sscanf/strtoull on a copy of each line were most of a scrape's time.
void SkipSpaces(std::string_view* s) {
  while (!s->empty() && s->front() == ' ') s->remove_prefix(1);
}

bool ReadDecimal(std::string_view* s, int64_t* out) {
  SkipSpaces(s);
  bool negative = false;
  if (!s->empty() && s->front() == '-') {
    negative = true;
    s->remove_prefix(1);
  }
  if (s->empty() || s->front() < '0' || s->front() > '9') return false;
  uint64_t v = 0;
  while (!s->empty() && s->front() >= '0' && s->front() <= '9') {
    v = v * 10 + static_cast<uint64_t>(s->front() - '0');
    s->remove_prefix(1);
  }
  *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

bool Expect(std::string_view* s, char c) {
  SkipSpaces(s);
  if (s->empty() || s->front() != c) return false;
  s->remove_prefix(1);
  return true;
}

// "0x1f" or "1f": false if no hex digit.
bool ReadHex(std::string_view* s, uint64_t* out) {
  if (s->size() >= 2 && (*s)[0] == '0' && ((*s)[1] == 'x' || (*s)[1] == 'X')) s->remove_prefix(2);
  uint64_t v = 0;
  size_t n = 0;
  for (; n < s->size(); ++n) {
    const char c = (*s)[n];
    const int digit = internal::HexDigitValue(c);
    if (digit < 0) break;
    v = (v << 4) | static_cast<uint64_t>(digit);
  }
  if (n == 0) return false;
  s->remove_prefix(n);
  *out = v;
  return true;
}

// "  a:  b [  c:  d] @ 0x1 0x2": false if the line is not a record.
bool ParseRecord(std::string_view line, Record* r) {
  if (!ReadDecimal(&line, &r->inuse_count) || !Expect(&line, ':') ||
      !ReadDecimal(&line, &r->inuse_bytes) || !Expect(&line, '[') ||
      !ReadDecimal(&line, &r->alloc_count) || !Expect(&line, ':') ||
      !ReadDecimal(&line, &r->alloc_bytes) || !Expect(&line, ']') || !Expect(&line, '@')) {
    return false;
  }
  r->pcs.clear();
  for (;;) {
    SkipSpaces(&line);
    uint64_t pc;
    if (!ReadHex(&line, &pc)) break;
    r->pcs.push_back(pc);
  }
  return true;
}

bool Parse(std::string_view text, Parsed* out, std::string* error) {
  const std::string_view header = NextLine(&text);
  if (header.substr(0, 13) != "heap profile:") {
    *error = "the profiler's sample is not a heap profile";
    return false;
  }
  const size_t at = header.rfind('@');
  const std::string_view kind = at == std::string_view::npos ? "" : header.substr(at + 1);
  if (kind.find("heap_v2/") != std::string_view::npos) {
    out->period = strtoll(std::string(kind.substr(kind.find('/') + 1)).c_str(), nullptr, 10);
  } else {
    out->period = 1;  // "heapprofile": exact counts
  }
  while (!text.empty()) {
    const std::string_view line = NextLine(&text);
    if (line.substr(0, 17) == "MAPPED_LIBRARIES:") {
      out->maps = text;
      break;
    }
    Record r;
    if (ParseRecord(line, &r)) out->records.push_back(std::move(r));
  }
  return true;
}

struct Scaled {
  int64_t inuse_objects, inuse_bytes, alloc_objects, alloc_bytes;
};

Scaled Scale(const Record& r, int64_t period) {
  const double rate = static_cast<double>(period);
  const alloc::Unsampled inuse = alloc::UnsampleLine(r.inuse_count, r.inuse_bytes, rate);
  const alloc::Unsampled allocated = alloc::UnsampleLine(r.alloc_count, r.alloc_bytes, rate);
  return {static_cast<int64_t>(inuse.count + 0.5), static_cast<int64_t>(inuse.bytes + 0.5),
          static_cast<int64_t>(allocated.count + 0.5), static_cast<int64_t>(allocated.bytes + 0.5)};
}

void AddTotals(const Scaled& s, HeapTotals* t) {
  t->inuse_objects += static_cast<double>(s.inuse_objects);
  t->inuse_bytes += static_cast<double>(s.inuse_bytes);
  t->alloc_objects += static_cast<double>(s.alloc_objects);
  t->alloc_bytes += static_cast<double>(s.alloc_bytes);
}

// One sample to write: a stack (a record's, in a Parsed that outlives the entry), its
// un-sampled values and the `bytes` label.
struct Entry {
  const std::vector<uint64_t>* pcs;
  Scaled values;
  int64_t average_size;
};

int64_t AverageSize(const Record& r) {
  const int64_t count = r.alloc_count > 0 ? r.alloc_count : r.inuse_count;
  const int64_t bytes = r.alloc_count > 0 ? r.alloc_bytes : r.inuse_bytes;
  return count > 0 ? bytes / count : 0;
}

// The profile's records as samples; with a baseline, per stack current − baseline (Go's
// seconds=N: every value a difference, stacks whose four differences are 0 left out).
std::vector<Entry> Entries(const Parsed& current, const Parsed* baseline, DeltaMode delta) {
  std::vector<Entry> out;
  if (baseline == nullptr) {
    for (const Record& r : current.records) {
      out.push_back({&r.pcs, Scale(r, current.period), AverageSize(r)});
    }
    return out;
  }
  std::map<std::vector<uint64_t>, size_t> index;  // stack → position in out
  auto add = [&](const Record& r, int64_t sign, int64_t period) {
    Scaled v = Scale(r, period);
    if (sign < 0 && delta == DeltaMode::kAllocOnly) v.inuse_objects = v.inuse_bytes = 0;
    auto [it, inserted] = index.emplace(r.pcs, out.size());
    if (inserted) out.push_back({&r.pcs, Scaled{0, 0, 0, 0}, AverageSize(r)});
    Scaled& sum = out[it->second].values;
    sum.inuse_objects += sign * v.inuse_objects;
    sum.inuse_bytes += sign * v.inuse_bytes;
    sum.alloc_objects += sign * v.alloc_objects;
    sum.alloc_bytes += sign * v.alloc_bytes;
  };
  for (const Record& r : current.records) add(r, 1, current.period);
  for (const Record& r : baseline->records) add(r, -1, baseline->period);
  std::vector<Entry> nonzero;
  for (Entry& e : out) {
    const Scaled& v = e.values;
    if (v.inuse_objects != 0 || v.inuse_bytes != 0 || v.alloc_objects != 0 || v.alloc_bytes != 0)
      nonzero.push_back(std::move(e));
  }
  return nonzero;
}

// The string table: index 0 is "".
class Strings {
 public:
  Strings() { Index(""); }
  int64_t Index(const std::string& s) {
    auto [it, inserted] = index_.emplace(s, static_cast<int64_t>(table_.size()));
    if (inserted) table_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& table() const { return table_; }

 private:
  std::unordered_map<std::string, int64_t> index_;
  std::vector<std::string> table_;
};

// profile.proto field numbers.
enum ProfileField {
  kSampleType = 1,
  kSample = 2,
  kMapping = 3,
  kLocation = 4,
  kFunction = 5,
  kStringTable = 6,
  kTimeNanos = 9,
  kDurationNanos = 10,
  kPeriodType = 11,
  kPeriod = 12,
  kDefaultSampleType = 14,
};

ProtoEncoder ValueType(Strings* s, const char* type, const char* unit) {
  ProtoEncoder v;
  v.Int64(1, s->Index(type));
  v.Int64(2, s->Index(unit));
  return v;
}

}  // namespace

bool HeapProfileTotals(std::string_view legacy, HeapTotals* totals, std::string* error) {
  Parsed parsed;
  if (!Parse(legacy, &parsed, error)) return false;
  *totals = HeapTotals{};
  totals->sample_period = parsed.period;
  totals->stacks = parsed.records.size();
  for (const Record& r : parsed.records) AddTotals(Scale(r, parsed.period), totals);
  return true;
}

namespace {

// The profile being encoded: the string table, the location and function IDs given so far and
// the encoded repeated fields, concatenated in Go's order by Finish.
class ProfileBuilder {
 public:
  explicit ProfileBuilder(std::string_view maps)
      : mappings_(ExecutableMappings(maps)), unnamed_(mappings_.size(), false) {
    for (auto [type, unit] : {std::pair{"alloc_objects", "count"},
                              {"alloc_space", "bytes"},
                              {"inuse_objects", "count"},
                              {"inuse_space", "bytes"}}) {
      head_.Message(kSampleType, ValueType(&strings_, type, unit));
    }
    symbolizer_ = SymbolizerFor(maps, mappings_);
    bytes_key_ = strings_.Index("bytes");
  }

  void AddSample(const Entry& e) {
    const Scaled& s = e.values;
    ids_.clear();
    for (uint64_t pc : *e.pcs) ids_.push_back(LocationId(pc));
    ProtoEncoder one;
    one.PackedVarints(1, ids_);
    const int64_t values[] = {s.alloc_objects, s.alloc_bytes, s.inuse_objects, s.inuse_bytes};
    one.PackedInt64s(2, values);
    ProtoEncoder label;
    label.Int64(1, bytes_key_);
    label.Int64(3, e.average_size);
    one.Message(3, label);
    samples_.Message(kSample, one);
  }

  std::string Finish(HeapView view, int64_t time_nanos, int64_t duration_nanos, int64_t period) {
    std::string out = head_.data();
    out += samples_.data();
    out += Mappings().data();
    out += locations_.data();
    out += functions_.data();
    ProtoEncoder tail;
    ProtoEncoder period_type = ValueType(&strings_, "space", "bytes");
    const bool allocs = view == HeapView::kAllocs || view == HeapView::kDeltaHeap;
    const int64_t default_type = strings_.Index(allocs ? "alloc_space" : "inuse_space");
    for (const std::string& s : strings_.table()) tail.Bytes(kStringTable, s, true);
    tail.Int64(kTimeNanos, time_nanos);
    tail.Int64(kDurationNanos, duration_nanos);
    tail.Message(kPeriodType, period_type);
    tail.Int64(kPeriod, period);
    tail.Int64(kDefaultSampleType, default_type);
    out += tail.data();
    return out;
  }

 private:
  uint64_t LocationId(uint64_t pc) {
    auto [it, inserted] = location_ids_.emplace(pc, location_ids_.size() + 1);
    if (!inserted) return it->second;
    ProtoEncoder location;
    location.Varint(1, it->second);
    size_t mapping = mappings_.size();
    for (size_t m = 0; m < mappings_.size(); ++m) {
      if (pc >= mappings_[m].start && pc < mappings_[m].limit) mapping = m;
    }
    if (mapping < mappings_.size()) location.Varint(2, mapping + 1);
    location.Varint(3, pc);
    // Return addresses: look up the call instruction (pc - 1). Innermost inline frame
    // first, the physical function last, as profile.proto's Location.line wants.
    const std::vector<pprof::SourceFrame>& frames = symbolizer_->Symbolize(pc > 0 ? pc - 1 : pc);
    if (frames.size() == 1 && frames[0].placeholder) {
      // Nothing here names it (a stripped binary): the address alone, in a mapping marked as
      // not symbolized, so that pprof-tool, go pprof or a fleet server names it later from
      // the unstripped binary or debug file with the mapping's build ID.
      if (mapping < mappings_.size()) unnamed_[mapping] = true;
      locations_.Message(kLocation, location);
      return it->second;
    }
    for (const pprof::SourceFrame& f : frames) {
      ProtoEncoder line;
      line.Varint(1, FunctionId(f));
      line.Int64(2, f.line);
      location.Message(4, line);
    }
    locations_.Message(kLocation, location);
    return it->second;
  }

  uint64_t FunctionId(const pprof::SourceFrame& f) {
    const std::string system = f.linkage_name != nullptr ? f.linkage_name : f.function;
    auto key = std::make_tuple(f.function, system, f.file, f.start_line);
    auto [it, inserted] = function_ids_.emplace(key, function_ids_.size() + 1);
    if (inserted) {
      ProtoEncoder function;
      function.Varint(1, it->second);
      function.Int64(2, strings_.Index(f.function));
      function.Int64(3, strings_.Index(system));
      function.Int64(4, strings_.Index(f.file));
      function.Int64(5, f.start_line);
      functions_.Message(kFunction, function);
    }
    return it->second;
  }

  ProtoEncoder Mappings() {
    ProtoEncoder out;
    for (size_t m = 0; m < mappings_.size(); ++m) {
      ProtoEncoder mapping;
      mapping.Varint(1, m + 1);
      mapping.Varint(2, mappings_[m].start);
      mapping.Varint(3, mappings_[m].limit);
      mapping.Varint(4, mappings_[m].offset);
      mapping.Int64(5, strings_.Index(mappings_[m].path));
      mapping.Int64(6, strings_.Index(BuildIdOf(mappings_[m].path)));
      // has_functions, has_filenames, has_line_numbers, has_inline_frames: all true when every
      // location of the mapping was named here, all false otherwise (go pprof symbolizes a
      // mapping only when the first three are false, and then every location of it).
      for (int field = 7; field <= 10; ++field) mapping.Bool(field, !unnamed_[m]);
      out.Message(kMapping, mapping);
    }
    return out;
  }

  const std::vector<CodeMapping> mappings_;
  std::vector<bool> unnamed_;  // per mapping: a location in it that nothing here could name
  pprof::Symbolizer* symbolizer_;
  Strings strings_;
  int64_t bytes_key_;
  std::unordered_map<uint64_t, uint64_t> location_ids_;  // pc → id
  std::map<std::tuple<std::string, std::string, std::string, int>, uint64_t> function_ids_;
  ProtoEncoder head_, samples_, locations_, functions_;
  std::vector<uint64_t> ids_;
};

}  // namespace

bool HeapProfileToProto(std::string_view legacy, std::string_view baseline, HeapView view,
                        int64_t time_nanos, int64_t duration_nanos, std::string* proto,
                        HeapTotals* totals, std::string* error, DeltaMode delta) {
  Parsed parsed, parsed_baseline;
  if (!Parse(legacy, &parsed, error)) return false;
  if (!baseline.empty() && !Parse(baseline, &parsed_baseline, error)) return false;
  const std::vector<Entry> entries =
      Entries(parsed, baseline.empty() ? nullptr : &parsed_baseline, delta);
  *totals = HeapTotals{};
  totals->sample_period = parsed.period;
  totals->stacks = parsed.records.size();
  ProfileBuilder builder(parsed.maps);
  for (const Entry& e : entries) {
    AddTotals(e.values, totals);
    builder.AddSample(e);
  }
  *proto = builder.Finish(view, time_nanos, duration_nanos, parsed.period);
  return true;
}

}  // namespace heapkit::prof::http
