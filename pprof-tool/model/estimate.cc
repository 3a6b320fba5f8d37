#include "pprof-tool/model/estimate.h"

#include <cmath>
#include <limits>

#include "alloc/sample_weight.h"  // header-only: the runtime's libraries are not linked

namespace heapkit::pprof {

ObjectVariance SampledObjectVariance(double size, double rate) {
  const alloc::SampleVariance v = alloc::SampleVarianceOf(size, rate);  // the runtime's formula
  return {v.objects, v.bytes};
}

ObjectVariance UnsampledRowVariance(double objects, double bytes, double rate) {
  objects = std::fabs(objects);
  bytes = std::fabs(bytes);
  if (rate <= 1 || objects <= 0 || bytes <= 0) return {};
  const double mean = bytes / objects;
  const double p = alloc::OneMinusExpOfMinus(mean / rate);
  if (!(p > 0)) return {};
  const double odds = (1 - p) / p;
  return {objects * odds, bytes * mean * odds};
}

ObjectVariance SampledRowVariance(double count, double bytes, double rate) {
  count = std::fabs(count);
  bytes = std::fabs(bytes);
  if (count <= 0 || bytes <= 0) return {};
  const ObjectVariance one = SampledObjectVariance(bytes / count, rate);
  return {count * one.objects, count * one.bytes};
}

double UnsamplingRate(const Profile& profile) {
  const double rate = static_cast<double>(profile.sample_period);
  switch (profile.kind) {
    case ProfileKind::kHeapV1: return rate / 2;  // pprof's reading of "heap/<rate>"
    case ProfileKind::kGrowth: return 0;
    default: return rate;  // heap_v2, a heap_v2 leak dump, profile.proto's period
  }
}

VarianceSource VarianceSourceOf(const Profile& profile) {
  if (UnsamplingRate(profile) <= 1) return VarianceSource::kExact;
  if (profile.variance_recorded) return VarianceSource::kRecorded;
  // heapkit's own legacy dumps: one row per stack and size key (profiler/table/sample_estimate.h).
  if (profile.kind == ProfileKind::kHeapV2 && profile.dump_time != 0)
    return VarianceSource::kPerRow;
  return VarianceSource::kMeanSize;
}

SampleValues SampleVarianceOf(const RawSample& s, double rate) {
  if (s.has_variance) return s.variance;
  const ObjectVariance inuse =
      UnsampledRowVariance(s.value.inuse_objects, s.value.inuse_bytes, rate);
  const ObjectVariance alloc =
      UnsampledRowVariance(s.value.alloc_objects, s.value.alloc_bytes, rate);
  SampleValues v;
  v.inuse_objects = inuse.objects;
  v.inuse_bytes = inuse.bytes;
  v.alloc_objects = alloc.objects;
  v.alloc_bytes = alloc.bytes;
  return v;
}

double ZScore(double value, double variance) {
  if (variance > 0) return value / std::sqrt(variance);
  if (value == 0) return 0;
  return value > 0 ? std::numeric_limits<double>::infinity()
                   : -std::numeric_limits<double>::infinity();
}

bool IsSignificant(double value, double variance) {
  return std::fabs(ZScore(value, variance)) >= kIntervalSigmas;
}

std::string FormatInterval(double variance, ValueUnit unit, bool show_bytes) {
  if (!(variance > 0)) return "";
  return "± " + FormatValue(kIntervalSigmas * std::sqrt(variance), unit, show_bytes);
}

std::string IntervalNote(VarianceSource source) {
  switch (source) {
    case VarianceSource::kExact: return "";
    case VarianceSource::kRecorded:
      return "Intervals: ± 2 standard errors (95 %) of the sampled estimate, from the variance "
             "the profiler recorded per row";
    case VarianceSource::kPerRow:
      return "Intervals: ± 2 standard errors (95 %) of the sampled estimate, computed at each "
             "row's mean object size (the file records no variance)";
    case VarianceSource::kMeanSize:
      return "Intervals: ± 2 standard errors (95 %) of the sampled estimate, approximated from "
             "each row's mean object size (the file records no per-sample weights)";
  }
  return "";
}

}  // namespace heapkit::pprof
