// --lifetime and --since (object_time_views.h).
#include "pprof-tool/report/object_time_views.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "pprof-tool/model/estimate.h"
#include "pprof-tool/model/value_format.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "alloc/sample_weight.h"  // header-only: the runtime's libraries are not linked

namespace heapkit::pprof {
namespace {

constexpr uint64_t kBinNs[] = {0,           1000,         10000,         100000,
                               1000000,     10000000,     100000000,     1000000000,
                               10000000000, 100000000000, 1000000000000, 3600000000000};
constexpr const char* kBinNames[] = {"<1us",  "1us", "10us", "100us", "1ms",   "10ms",
                                     "100ms", "1s",  "10s",  "100s",  "1000s", "1h+"};
constexpr int kBins = sizeof(kBinNs) / sizeof(kBinNs[0]);

int BinIndex(uint64_t bin_ns) {
  for (int i = kBins - 1; i >= 0; --i)
    if (bin_ns >= kBinNs[i]) return i;
  return 0;
}

std::string Bytes(double v) { return FormatValue(v, ValueUnit::kBytes); }

std::string Percent(double part, double whole) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return buf;
}

bool Matches(const LifetimeFilter& f, const LifetimeLine& l) {
  using End = LifetimeLine::End;
  switch (f.kind) {
    case LifetimeFilter::Kind::kBelow: return l.end != End::kLive && l.bin_ns < f.bound_ns;
    case LifetimeFilter::Kind::kAtLeast: return l.bin_ns >= f.bound_ns;
    case LifetimeFilter::Kind::kLive: return l.end == End::kLive;
    case LifetimeFilter::Kind::kFreed: return l.end != End::kLive;
    case LifetimeFilter::Kind::kCrossThread: return l.end == End::kOtherThread;
    case LifetimeFilter::Kind::kSameThread: return l.end == End::kSameThread;
  }
  return false;
}

// A view's estimate for one stack and its sampling variance (model/estimate.h): the sum over
// the lines it selects, each line's variance from its sampled count and bytes.
struct StackEstimate {
  double objects = 0;
  double bytes = 0;
  double objects_variance = 0;
  double bytes_variance = 0;
};
using StackEstimates = std::map<std::vector<uint64_t>, StackEstimate>;

// Samples with the given values per stack (estimated bytes and objects in every column).
// The dump's own stacks still decide its allocation wrappers (one folding per profile).
void ReplaceSamples(const StackEstimates& by_stack, Profile* profile) {
  if (profile->wrapper_stacks.empty()) {
    for (const RawSample& s : profile->samples) {
      if (s.value.inuse_bytes != 0 || s.value.alloc_bytes != 0 || s.value.inuse_objects != 0 ||
          s.value.alloc_objects != 0)
        profile->wrapper_stacks.push_back(s.pcs);
    }
  }
  profile->samples.clear();
  for (const auto& [pcs, v] : by_stack) {
    RawSample s;
    s.pcs = pcs;
    s.value.inuse_objects = s.value.alloc_objects = v.objects;
    s.value.inuse_bytes = s.value.alloc_bytes = v.bytes;
    s.raw = s.value;
    s.variance.inuse_objects = s.variance.alloc_objects = v.objects_variance;
    s.variance.inuse_bytes = s.variance.alloc_bytes = v.bytes_variance;
    s.has_variance = true;
    profile->samples.push_back(std::move(s));
  }
  profile->has_alloc_columns = true;
  profile->variance_recorded = false;  // from the lines' counts and bytes (model/estimate.h)
  profile->stack_residency.clear();
}

}  // namespace

bool ParseLifetimeFilter(const std::string& text, LifetimeFilter* f, std::string* error) {
  f->text = text;
  using Kind = LifetimeFilter::Kind;
  const std::pair<const char*, Kind> words[] = {{"live", Kind::kLive},
                                                {"freed", Kind::kFreed},
                                                {"cross", Kind::kCrossThread},
                                                {"same", Kind::kSameThread}};
  for (const auto& [word, kind] : words) {
    if (text == word) {
      f->kind = kind;
      return true;
    }
  }
  const char* bad =
      "--lifetime: expected <D or >D (D one of 1us 10us 100us 1ms 10ms 100ms 1s "
      "10s 100s 1000s 1h), live, freed, cross or same; got '";
  if (text.size() < 2 || (text[0] != '<' && text[0] != '>')) {
    *error = bad + text + "'";
    return false;
  }
  f->kind = text[0] == '<' ? Kind::kBelow : Kind::kAtLeast;
  const std::string bound = text.substr(text[1] == '=' ? 2 : 1);
  for (int i = 1; i < kBins; ++i) {
    if (bound == kBinNames[i] || (i == kBins - 1 && bound == "1h")) {
      f->bound_ns = kBinNs[i];
      return true;
    }
  }
  *error = bad + text + "' (lifetimes are kept by decade)";
  return false;
}

bool ApplyLifetimeView(const LifetimeFilter& filter, Profile* profile,
                       std::vector<std::string>* notes, std::string* error) {
  const std::vector<LifetimeLine>& lines = profile->object_times.lifetimes;
  if (lines.empty()) {
    *error =
        profile->file + " has no lifetime lines (dumps carry them with HEAP_PROFILE_LIFETIMES=1)";
    return false;
  }
  StackEstimates by_stack;
  const double rate = UnsamplingRate(*profile);
  double all = 0, selected = 0, freed = 0, cross = 0, live = 0;
  double by_bin[kBins] = {};
  for (const LifetimeLine& l : lines) {
    const double objects = l.bytes > 0 ? l.count * l.estimated_bytes / l.bytes : l.count;
    all += l.estimated_bytes;
    by_bin[BinIndex(l.bin_ns)] += l.estimated_bytes;
    if (l.end == LifetimeLine::End::kLive) {
      live += l.estimated_bytes;
    } else {
      freed += l.estimated_bytes;
      if (l.end == LifetimeLine::End::kOtherThread) cross += l.estimated_bytes;
    }
    if (!Matches(filter, l)) continue;
    StackEstimate& v = by_stack[l.pcs];
    const ObjectVariance variance = SampledRowVariance(l.count, l.bytes, rate);
    v.objects += objects;
    v.bytes += l.estimated_bytes;
    v.objects_variance += variance.objects;
    v.bytes_variance += variance.bytes;
    selected += l.estimated_bytes;
  }
  ReplaceSamples(by_stack, profile);
  notes->push_back("Lifetime " + filter.text + ": " + Bytes(selected) + " of " + Bytes(all) +
                   " allocated while profiling (" + Percent(selected, all) + ")");
  notes->push_back("Freed: " + Bytes(freed) + " (by another thread: " + Bytes(cross) + ", " +
                   Percent(cross, freed) + "); live at this dump: " + Bytes(live));
  std::string histogram = "By lifetime (live objects by age so far):";
  for (int i = 0; i < kBins; ++i)
    if (by_bin[i] != 0)
      histogram += std::string(" ") + kBinNames[i] + " " + Percent(by_bin[i], all);
  notes->push_back(histogram);
  return true;
}

namespace {

// --since's view of one allocation stack: its sampled live bytes at dump M by the interval
// they were allocated in, and what it held at dump N.
struct SinceStack {
  double fresh = 0;      // allocated after dump N, live at M
  double survivors = 0;  // allocated before dump N, live at M
  double live_at_n = 0;  // live at dump N
  double live_objects_at_n = 0;
  double fresh_variance = 0;  // sampling variance of `fresh` (model/estimate.h)
  std::vector<double> by_interval;
};
using SinceStacks = std::map<std::vector<uint64_t>, SinceStack>;

// Dump M's age lines (un-sampled) per stack and interval, and dump N's live bytes per stack.
SinceStacks GatherSinceStacks(int since, const Profile* dump_n, const Profile& profile) {
  const ObjectTimes& times = profile.object_times;
  const int m = times.ages_dump;
  const double rate = static_cast<double>(profile.sample_period);
  SinceStacks stacks;
  for (const AgeLine& a : times.ages) {
    const double bytes = a.count > 0 ? a.bytes * alloc::SampleScale(a.bytes / a.count, rate) : 0.0;
    SinceStack& s = stacks[a.pcs];
    if (static_cast<int>(a.interval) >= since) {
      s.fresh += bytes;
      s.fresh_variance += SampledRowVariance(a.count, a.bytes, rate).bytes;
    } else {
      s.survivors += bytes;
    }
    if (s.by_interval.size() < static_cast<size_t>(m)) s.by_interval.resize(m);
    if (a.interval < static_cast<uint32_t>(m)) s.by_interval[a.interval] += bytes;
  }
  if (dump_n != nullptr) {
    for (const RawSample& r : dump_n->samples) {
      auto it = stacks.find(r.pcs);
      if (it != stacks.end()) {
        it->second.live_at_n += r.value.inuse_bytes;
        it->second.live_objects_at_n += r.value.inuse_objects;
      } else if (r.value.inuse_bytes > 0) {
        SinceStack& s = stacks[r.pcs];  // all of it freed since
        s.live_at_n += r.value.inuse_bytes;
        s.live_objects_at_n += r.value.inuse_objects;
      }
    }
  }
  return stacks;
}

// The hint: how the stack's live bytes spread over the m intervals, and whether it frees old
// objects (`freed_old`, known only with dump N).
std::string AgeHintText(const SinceStack& s, int m, bool have_dump_n, double freed_old,
                        double growth) {
  int present = 0;
  double older_half = 0, total = 0;
  for (size_t i = 0; i < s.by_interval.size(); ++i) {
    total += s.by_interval[i];
    if (s.by_interval[i] > 0) ++present;
    if (i < static_cast<size_t>(m) / 2) older_half += s.by_interval[i];
  }
  const std::string spread = "live bytes from " + std::to_string(present) + " of " +
                             std::to_string(m) + " dump intervals, " + Percent(older_half, total) +
                             " from the older half";
  if (have_dump_n && s.fresh > 0 && freed_old >= 0.5 * s.fresh) {
    return "cache-like: replaces its objects (" + Bytes(freed_old) + " of older ones freed, " +
           Bytes(s.fresh) + " new); " + spread;
  }
  if (s.fresh == 0 && growth < 0) {
    return "shrinking: older objects only, " + Bytes(-growth) + " of them freed; " + spread;
  }
  if (total > 0 && older_half >= 0.25 * total && present * 4 >= 3 * m &&
      (!have_dump_n || freed_old <= 0.1 * s.fresh)) {
    return "leak-like: in use from every age and rising (" + Bytes(m > 0 ? total / m : 0) +
           " per dump interval); " + spread;
  }
  return "bounded age: " + spread;
}

}  // namespace

bool ApplySinceView(int since, const Profile* dump_n, Profile* profile,
                    std::vector<std::string>* notes, std::vector<AgeHint>* hints,
                    std::string* error) {
  const int m = profile->object_times.ages_dump;
  if (m == 0) {
    *error = profile->file + " has no age lines (dumps carry them with HEAP_PROFILE_AGES=1)";
    return false;
  }
  if (since < 0 || since >= m) {
    *error = "--since=" + std::to_string(since) + ": " + profile->file + " is dump " +
             std::to_string(m) + "; choose 0 <= N < " + std::to_string(m);
    return false;
  }
  const SinceStacks stacks = GatherSinceStacks(since, dump_n, *profile);
  StackEstimates by_stack;
  const double rate = UnsamplingRate(*profile);
  double fresh_total = 0, freed_total = 0;
  std::vector<AgeHint> all_hints;
  for (const auto& [pcs, s] : stacks) {
    const double freed_old = dump_n != nullptr ? std::max(0.0, s.live_at_n - s.survivors) : 0;
    const double growth = s.fresh - freed_old;
    fresh_total += s.fresh;
    freed_total += freed_old;
    // The two terms are estimated from disjoint sets of objects (allocated after N; live at N
    // and freed since), so their variances add; the freed objects at dump N's mean size.
    const double mean_at_n = s.live_objects_at_n > 0 ? s.live_at_n / s.live_objects_at_n : 0;
    const double freed_variance =
        mean_at_n > 0 ? UnsampledRowVariance(freed_old / mean_at_n, freed_old, rate).bytes : 0;
    by_stack[pcs] = {0, growth, 0, s.fresh_variance + freed_variance};
    all_hints.push_back({pcs, growth, AgeHintText(s, m, dump_n != nullptr, freed_old, growth)});
  }
  ReplaceSamples(by_stack, profile);
  for (RawSample& s : profile->samples) {  // objects are not split by age: bytes only
    s.value.inuse_objects = s.value.alloc_objects = 0;
    s.raw = s.value;
  }
  notes->push_back("Since dump " + std::to_string(since) + " (to dump " + std::to_string(m) +
                   "): allocated after it and live now " + Bytes(fresh_total) +
                   (dump_n != nullptr ? "; live then and freed since " + Bytes(freed_total) +
                                            "; growth " + Bytes(fresh_total - freed_total)
                                      : "; dump " + std::to_string(since) +
                                            " not found, so frees of older objects are not "
                                            "subtracted"));
  std::sort(all_hints.begin(), all_hints.end(),
            [](const AgeHint& a, const AgeHint& b) { return a.growth > b.growth; });
  if (all_hints.size() > 10) all_hints.resize(10);
  *hints = std::move(all_hints);
  return true;
}

}  // namespace heapkit::pprof
