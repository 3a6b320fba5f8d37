#include "profiler/format/heap_profile_encoder.h"

#include <string.h>

#include "profiler/format/heap_profile_text.h"
#include "profiler/format/heap_sample_values.h"
#include "profiler/format/mapped_bytes.h"
#include "profiler/format/profile_builder.h"
#include "profiler/symbolize/build_id.h"

namespace heapkit::prof {
namespace {

// The lifetime decades (object_times_dump.h) by their lower bounds.
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

// Seconds with a fraction ("1795718736.075") as nanoseconds.
int64_t ReadUnixNanos(const char* p, const char* end) {
  int64_t seconds = 0, fraction = 0, scale = 1000000000;
  if (p >= end || *p < '0' || *p > '9') return 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p) seconds = seconds * 10 + (*p - '0');
  if (p < end && *p == '.') {
    for (++p; p < end && *p >= '0' && *p <= '9' && scale > 1; ++p) {
      scale /= 10;
      fraction += (*p - '0') * scale;
    }
  }
  return seconds * 1000000000 + fraction;
}

bool StartsWith(const char* line, size_t size, const char* prefix) {
  const size_t n = strlen(prefix);
  return size >= n && memcmp(line, prefix, n) == 0;
}

void HeapValuesOf(const HeapTextRecord& r, int64_t period, int64_t* values) {
  const double rate = static_cast<double>(period);
  const HeapLine line{r.inuse_count,
                      r.inuse_bytes,
                      r.alloc_count,
                      r.alloc_bytes,
                      period,
                      alloc::UnsampleLine(r.inuse_count, r.inuse_bytes, rate),
                      alloc::UnsampleLine(r.alloc_count, r.alloc_bytes, rate)};
  for (int i = 0; i < kHeapValueCount; ++i) values[i] = kHeapValues[i].of(line);
}

int64_t AverageSize(const HeapTextRecord& r) {
  const int64_t count = r.alloc_count > 0 ? r.alloc_count : r.inuse_count;
  const int64_t bytes = r.alloc_count > 0 ? r.alloc_bytes : r.inuse_bytes;
  return count > 0 ? bytes / count : 0;
}

// The per-stack sums of a delta, text − baseline, in first-seen order, malloc-free: entries
// (Entry, then its pcs) in one buffer, an open-addressing index of their offsets by stack.
class StackSums {
 public:
  struct Entry {
    int64_t values[kHeapValueCount];
    int64_t average_size;
    int depth;
    // The stack's pcs follow the entry (depth of them).
    const uint64_t* pcs() const { return reinterpret_cast<const uint64_t*>(this + 1); }
  };

  void Add(const HeapTextStack& stack, const int64_t* values, int64_t sign, bool in_use_too,
           int64_t average_size) {
    Entry* e = Find(stack, average_size);
    if (e == nullptr) return;
    for (int i = 0; i < kHeapValueCount; ++i) {
      if (in_use_too || !kHeapValues[i].in_use) e->values[i] += sign * values[i];
    }
  }
  bool failed() const { return failed_ || entries_.failed() || slots_.failed(); }

  template <class Fn>
  void ForEach(Fn fn) const {
    for (size_t at = 0; at < entries_.size();) {
      const auto* e = reinterpret_cast<const Entry*>(entries_.data() + at);
      fn(*e);
      at += EntryBytes(e->depth);
    }
  }

 private:
  static size_t EntryBytes(int depth) {
    return sizeof(Entry) + static_cast<size_t>(depth) * sizeof(uint64_t);
  }
  static uint64_t Hash(const HeapTextStack& s) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < s.depth; ++i) h = (h ^ s.pcs[i]) * 0x9e3779b97f4a7c15ull;
    return h ^ static_cast<uint64_t>(s.depth);
  }
  Entry* At(uint64_t offset) { return reinterpret_cast<Entry*>(entries_.data() + offset); }

  Entry* Find(const HeapTextStack& stack, int64_t average_size) {
    if (!Grow()) return nullptr;
    auto* slots = reinterpret_cast<uint64_t*>(slots_.data());  // offset + 1, 0 empty
    size_t at = (Hash(stack) >> 20) & (slot_count_ - 1);
    for (; slots[at] != 0; at = (at + 1) & (slot_count_ - 1)) {
      Entry* e = At(slots[at] - 1);
      if (e->depth == stack.depth &&
          memcmp(e->pcs(), stack.pcs, static_cast<size_t>(stack.depth) * sizeof(uint64_t)) == 0) {
        return e;
      }
    }
    const size_t offset = entries_.size();
    const size_t bytes = EntryBytes(stack.depth);
    if (!entries_.Reserve(bytes)) return nullptr;
    alignas(Entry) char head[sizeof(Entry)] = {};
    reinterpret_cast<Entry*>(head)->average_size = average_size;
    reinterpret_cast<Entry*>(head)->depth = stack.depth;
    entries_.append(head, sizeof(Entry));
    entries_.append(reinterpret_cast<const char*>(stack.pcs), bytes - sizeof(Entry));
    slots[at] = offset + 1;
    ++count_;
    return At(offset);
  }

  bool Grow() {
    if ((count_ + 1) * 2 <= slot_count_) return true;
    const size_t n = slot_count_ == 0 ? 1024 : slot_count_ * 2;
    MappedBytes grown;
    if (!grown.Reserve(n * sizeof(uint64_t))) {
      failed_ = true;
      return false;
    }
    memset(grown.data(), 0, n * sizeof(uint64_t));
    auto* to = reinterpret_cast<uint64_t*>(grown.data());
    const auto* from = reinterpret_cast<const uint64_t*>(slots_.data());
    for (size_t i = 0; i < slot_count_; ++i) {
      if (from[i] == 0) continue;
      const Entry* e = At(from[i] - 1);
      size_t at = (Hash(HeapTextStack{e->pcs(), e->depth}) >> 20) & (n - 1);
      while (to[at] != 0) at = (at + 1) & (n - 1);
      to[at] = from[i];
    }
    slots_.clear();
    slots_.append(grown.data(), n * sizeof(uint64_t));
    slot_count_ = n;
    return !slots_.failed();
  }

  MappedBytes entries_, slots_;
  size_t count_ = 0, slot_count_ = 0;
  bool failed_ = false;
};

class Encoder final : public HeapTextVisitor {
 public:
  Encoder(const HeapProtoOptions& options, bool variance, bool lifetimes, int64_t period,
          bool build, HeapTotals* totals)
      : options_(options),
        variance_(variance),
        lifetimes_(lifetimes),
        period_(period),
        lifetime_first_(kHeapValueCount + (variance ? kVarianceValueCount : 0)),
        value_count_(lifetime_first_ + (lifetimes ? kLifetimeValueCount : 0)),
        build_(build),
        totals_(totals),
        builder_(types_, value_count_) {
    for (int i = 0; i < kHeapValueCount; ++i) types_[i] = kHeapValues[i].type;
    for (int i = 0; variance && i < kVarianceValueCount; ++i) {
      types_[kHeapValueCount + i] = kVarianceValues[i].type;
    }
    for (int i = 0; lifetimes && i < kLifetimeValueCount; ++i) {
      types_[lifetime_first_ + i] = kLifetimeValues[i].type;
    }
    builder_.SetNamer(options.namer);
    time_nanos_ = options.time_nanos;
  }

  void Mapping(const HeapTextMapping& m) override {
    if (!build_) return;
    char build_id[128];
    pprof::ReadElfBuildIdHex(m.path, build_id, sizeof(build_id));
    builder_.AddMapping(m.start, m.limit, m.offset, m.path, build_id);
  }

  void Record(const HeapTextRecord& r) override {
    ++records_;
    int64_t values[ProfileBuilder::kMaxValues] = {};
    HeapValuesOf(r, period_, values);
    if (delta_ != nullptr) {
      delta_->Add(r.stack, values, 1, true, AverageSize(r));
    } else {
      HeapSample(r.stack, values, variance_ ? r.variance : nullptr, AverageSize(r));
    }
  }

  void Lifetime(const HeapTextLifetime& l) override {
    if (!lifetimes_ || !build_) return;
    const bool live = l.kind == HeapTextLifetime::kLive;
    const int64_t objects =
        l.bytes > 0 ? Round(static_cast<double>(l.count) * static_cast<double>(l.estimated_bytes) /
                            static_cast<double>(l.bytes))
                    : l.count;
    // A freed line with the free's stack becomes a pair of samples joined by a
    // callstack-pair-id, so that a reader shows where the bytes were freed (sample index
    // deallocated_space) and can join the two.
    const int64_t pair = l.free_stack.depth > 0 ? ++pairs_ : 0;
    ProfileLabel labels[4] = {{"lifetime", DecadeName(l.bin_ns), 0, nullptr},
                              {"lifetime_ns", nullptr, l.bin_ns, "nanoseconds"}};
    int label_count = 2;
    if (!live) {
      labels[label_count++] = {
          "same_thread", l.kind == HeapTextLifetime::kSameThread ? "true" : "false", 0, nullptr};
    }
    if (pair != 0) labels[label_count++] = {"callstack-pair-id", nullptr, pair, "count"};
    LifetimeSample sample{objects, l.estimated_bytes, true, !live && pair == 0, live};
    LifetimeSampleTo(l.stack, sample, labels, label_count);
    if (pair == 0) return;
    sample.allocated = false;
    sample.deallocated = true;
    LifetimeSampleTo(l.free_stack, sample, labels, label_count);
  }

  void Comment(const char* line, size_t size) override {
    if (!options_.comments || !build_) return;
    builder_.AddComment(line, size);
    if (options_.time_nanos != 0) return;
    static const char kDumpTime[] = "# heapkit: dump time: ";
    if (StartsWith(line, size, kDumpTime) && !peak_time_) {
      time_nanos_ = ReadUnixNanos(line + sizeof(kDumpTime) - 1, line + size);
    } else if (StartsWith(line, size, "# heapkit: dump reason: peak profile")) {
      for (const char* p = line; p + 10 <= line + size; ++p) {
        if (memcmp(p, "unix time ", 10) == 0) {
          time_nanos_ = ReadUnixNanos(p + 10, line + size);
          peak_time_ = true;
          break;
        }
      }
    }
  }

  // The baseline's records, subtracted (the text's were added by Record).
  bool SubtractBaseline(const char* text, size_t size, StackSums* sums) {
    struct Baseline final : HeapTextVisitor {
      StackSums* sums;
      bool in_use_too;
      int64_t period = 1;
      void Record(const HeapTextRecord& r) override {
        int64_t values[ProfileBuilder::kMaxValues] = {};
        HeapValuesOf(r, period, values);
        sums->Add(r.stack, values, -1, in_use_too, AverageSize(r));
      }
    } baseline;
    baseline.sums = sums;
    baseline.in_use_too = !options_.delta_alloc_only;
    return ReadHeapTextPeriod(text, size, &baseline.period) && ReadHeapText(text, size, &baseline);
  }
  void SetDelta(StackSums* sums) { delta_ = sums; }

  // The delta's stacks whose heap values do not all cancel, as samples.
  void EmitDelta() {
    delta_->ForEach([this](const StackSums::Entry& e) {
      bool nonzero = false;
      for (int64_t v : e.values) nonzero |= v != 0;
      if (nonzero) HeapSample(HeapTextStack{e.pcs(), e.depth}, e.values, nullptr, e.average_size);
    });
  }

  bool Finish(MappedBytes* out) {
    if (totals_ != nullptr) {
      totals_->sample_period = period_;
      totals_->stacks = records_;
    }
    if (!build_) return true;
    builder_.SetTimeNanos(time_nanos_);
    builder_.SetDurationNanos(options_.duration_nanos);
    builder_.SetPeriod("space", "bytes", period_);
    builder_.SetDefaultSampleType(options_.default_sample_type);
    return builder_.Finish(out);
  }

 private:
  // variance: the record's sampling variances (nullptr: zeros; only with variance_).
  void HeapSample(const HeapTextStack& stack, const int64_t* heap_values,
                  const HeapTextVariance* variance, int64_t average_size) {
    if (totals_ != nullptr) {
      totals_->alloc_objects += static_cast<double>(heap_values[kAllocObjects]);
      totals_->alloc_bytes += static_cast<double>(heap_values[kAllocSpace]);
      totals_->inuse_objects += static_cast<double>(heap_values[kInuseObjects]);
      totals_->inuse_bytes += static_cast<double>(heap_values[kInuseSpace]);
    }
    if (!build_) return;
    int64_t values[ProfileBuilder::kMaxValues] = {};
    memcpy(values, heap_values, sizeof(int64_t) * kHeapValueCount);
    for (int i = 0; variance != nullptr && i < kVarianceValueCount; ++i) {
      values[kHeapValueCount + i] = VarianceSampleValue(kVarianceValues[i].of(*variance));
    }
    const ProfileLabel bytes{"bytes", nullptr, average_size, nullptr};
    builder_.AddSample(stack.pcs, stack.depth, values, &bytes, 1);
  }

  void LifetimeSampleTo(const HeapTextStack& stack, const LifetimeSample& sample,
                        const ProfileLabel* labels, int label_count) {
    int64_t values[ProfileBuilder::kMaxValues] = {};
    for (int i = 0; i < kLifetimeValueCount; ++i) {
      values[lifetime_first_ + i] = kLifetimeValues[i].of(sample);
    }
    builder_.AddSample(stack.pcs, stack.depth, values, labels, label_count);
  }

  const HeapProtoOptions& options_;
  const bool variance_;  // the kVarianceValues sample types
  const bool lifetimes_;
  const int64_t period_;
  const int lifetime_first_;  // index of the first kLifetimeValues sample type
  const int value_count_;
  const bool build_;
  HeapTotals* const totals_;
  ProfileValueType types_[ProfileBuilder::kMaxValues];
  ProfileBuilder builder_;
  StackSums* delta_ = nullptr;
  int64_t time_nanos_ = 0;
  bool peak_time_ = false;
  size_t records_ = 0;
  int64_t pairs_ = 0;  // callstack-pair-ids handed out
};

}  // namespace

HeapProtoStatus HeapTextToProto(const char* text, size_t size, const HeapProtoOptions& options,
                                MappedBytes* out, HeapTotals* totals) {
  int64_t period, baseline_period;
  if (!ReadHeapTextPeriod(text, size, &period) ||
      (options.baseline != nullptr &&
       !ReadHeapTextPeriod(options.baseline, options.baseline_size, &baseline_period))) {
    return HeapProtoStatus::kNotAHeapProfile;
  }
  static const char kLifetime[] = "\n# heapkit: lifetime ";
  const bool lifetimes = options.lifetimes && options.baseline == nullptr &&
                         memmem(text, size, kLifetime, sizeof(kLifetime) - 1) != nullptr;
  // A delta's in-use variance is not the difference of two dumps' (objects live in both count
  // in neither): a delta carries none.
  static const char kVariance[] = "\n# heapkit: variance ";
  const bool variance = options.baseline == nullptr &&
                        memmem(text, size, kVariance, sizeof(kVariance) - 1) != nullptr;
  if (totals != nullptr) *totals = HeapTotals{};
  // The encoder's members are small (their tables are mmap'ed): the stack suffices.
  Encoder encoder(options, variance, lifetimes, period, out != nullptr, totals);
  StackSums sums;
  if (options.baseline != nullptr) encoder.SetDelta(&sums);
  ReadHeapText(text, size, &encoder);
  if (options.baseline != nullptr) {
    encoder.SubtractBaseline(options.baseline, options.baseline_size, &sums);
    if (sums.failed()) return HeapProtoStatus::kOutOfMemory;
    encoder.EmitDelta();
  }
  return encoder.Finish(out) ? HeapProtoStatus::kOk : HeapProtoStatus::kOutOfMemory;
}

HeapProtoStatus WriteHeapProto(const char* text, size_t size, const HeapProtoOptions& options,
                               void (*sink)(void* ctx, const char* data, size_t size), void* ctx,
                               HeapTotals* totals) {
  MappedBytes proto;
  const HeapProtoStatus status =
      HeapTextToProto(text, size, options, sink != nullptr ? &proto : nullptr, totals);
  if (status == HeapProtoStatus::kOk && sink != nullptr) sink(ctx, proto.data(), proto.size());
  return status;
}

}  // namespace heapkit::prof
