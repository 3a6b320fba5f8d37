// The sampling error of heap estimates: every figure pprof-tool un-samples carries a variance,
// and this unit is the one place that knows how to compute, combine and judge it.
//
// The sampler (alloc/sample_weight.h) records an allocation of s bytes with probability
// p(s) = 1 - exp(-s/R), independently of every other allocation, and weights it by 1/p objects
// and w = s/p bytes (Horvitz-Thompson). The estimate of a set of objects is the sum of the
// weights of its sampled members, and an unbiased estimate of its variance is
//     V = sum over the sampled members of w^2 (1 - p)      (bytes; 1/p^2 (1 - p) for objects).
// Because objects are sampled independently, the variances of disjoint sets add: a stack's
// variance is the sum of its rows', a node's flat or cum the sum of its stacks', a total the sum
// of all, and a difference of two disjoint sets (--base, --since) the sum of both sides'.
//
// heapkit's profiler records V per row (per bucket, from every sample's own size: the legacy
// dumps' `# heapkit: variance` lines, profile.proto's *_variance sample types); the readers
// put it on the sample (RawSample::variance) and the profile says so (variance_recorded).
// Files that do not record V per row give their rows' counts and bytes: V is then computed
// with every sampled object of a row at the row's mean size m = bytes / count, which is exact
// when the row's objects have one size (heapkit's rows: one stack and one size key, sizes within
// 19 %) and an approximation otherwise (gperftools, Go, jemalloc: one row per stack, sizes
// mixed). In terms of a row's un-sampled estimate (N objects, B bytes) at rate R:
//     V_objects = N (1 - p) / p,   V_bytes = B m (1 - p) / p,   p = 1 - exp(-m / R),
// so the variance follows from what every format keeps: the un-sampled values and the rate.
// Exact profiles (R <= 1, heapprofile, growth) have V = 0.
#pragma once

#include <string>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {

// An interval is value ± kIntervalSigmas standard errors: 95 % for a normal estimate.
inline constexpr double kIntervalSigmas = 2.0;

// The variance of one sampled object of `size` bytes at `rate`: w^2 (1 - p) for its bytes,
// (1 - p) / p^2 for its count. 0 when rate <= 1.
struct ObjectVariance {
  double objects = 0;
  double bytes = 0;
};
ObjectVariance SampledObjectVariance(double size, double rate);

// The variance of a row's estimate from its un-sampled `objects` and `bytes` at `rate`, every
// object at the row's mean size (above). Signs are ignored (a --base row is negated; its
// variance is not). 0 when rate <= 1 or the row is empty.
ObjectVariance UnsampledRowVariance(double objects, double bytes, double rate);

// The same from a row's sampled (raw) `count` and `bytes`, as lifetime and age lines give them.
ObjectVariance SampledRowVariance(double count, double bytes, double rate);

// How a profile's variances were obtained, for the report to say.
enum class VarianceSource {
  kExact,     // an exact profile: no sampling error
  kRecorded,  // recorded by the profiler from each sample's size (Profile::variance_recorded)
  kPerRow,    // heapkit's size-keyed rows: each row's objects within 19 % of its mean size
  kMeanSize,  // rows that mix sizes (gperftools, Go, jemalloc, profile.proto): approximation
};
VarianceSource VarianceSourceOf(const Profile& profile);

// The rate the profile's values were un-sampled with (heap v1's is half the written one).
double UnsamplingRate(const Profile& profile);

// The variances of a sample's values: RawSample::variance when its reader or view set it,
// else UnsampledRowVariance of its in-use and allocation pairs at `rate` (UnsamplingRate of
// the profile the sample was read from).
SampleValues SampleVarianceOf(const RawSample& sample, double rate);

// value / sqrt(variance): how many standard errors a value lies from 0. +-infinity when the
// variance is 0 and the value is not (an exact difference is always significant), 0 for 0.
double ZScore(double value, double variance);

// |z| >= kIntervalSigmas: the value is unlikely (< 5 %) to be sampling noise around 0.
bool IsSignificant(double value, double variance);

// "± 1.23MB" (kIntervalSigmas standard errors), formatted like the value; "" when variance is 0.
std::string FormatInterval(double variance, ValueUnit unit, bool show_bytes);

// One line for a report's legend saying how its intervals were obtained, or "" for kExact.
std::string IntervalNote(VarianceSource source);

}  // namespace heapkit::pprof
