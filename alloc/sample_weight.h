// Sampling weight: how many bytes / objects one sampled allocation stands for.
//
// The allocator samples with exponentially distributed byte gaps of mean R (the sample
// parameter). An allocation of s bytes is then sampled with probability p(s) = 1 - exp(-s/R)
// (the chance that a sampling point falls inside its s bytes). Horvitz-Thompson: each sampled
// object of size s stands for 1/p(s) objects and s/p(s) bytes, which is an unbiased estimate.
// For R <= 1 every allocation is recorded and the weight is exactly 1.
//
// This is the same formula google-pprof and `go tool pprof` apply to `heap_v2/<R>` lines, where
// s is the line's average object size (bytes / count). We key buckets by stack *and* a coarse
// size class (see stack_table.h) so that the average within a line is close to every member.
//
// 1 - exp(-x) is computed here (OneMinusExpOfMinus), not by libm's expm1: libheapkit.so depends
// on libc alone (profiler/on_demand/on_demand_library.h), like the allocator's logarithm
// (alloc/sampler.h).
#pragma once

#include <cstdint>
#include <cstring>

namespace heapkit::alloc {

// 1 - exp(-x) for x >= 0, accurate for tiny x as expm1 is (relative error about 1e-16; the unit
// test compares it with libm's -expm1(-x)).
//   x < 0.5:  x (1 - x/2 (1 - x/3 (1 - ... (1 - x/20)))), the alternating Taylor series nested
//             (the omitted terms are below 1e-22 of the result);
//   x < 40:   exp(-x) = 2^k exp(r), -x = k ln2 + r, |r| <= ln2/2 (ln2 split in two so that r is
//             exact to ~1e-25), exp(r) by its Taylor series to r^17; 1 - exp(-x) then loses
//             nothing since exp(-x) <= 0.61;
//   x >= 40:  exp(-x) < 2^-57 is below half an ulp of 1: the result is 1.
inline double OneMinusExpOfMinus(double x) {
  if (!(x > 0)) return 0.0;
  if (x >= 40) return 1.0;
  if (x < 0.5) {
    double nested = 1.0;
    for (int k = 20; k >= 2; --k) nested = 1.0 - x / k * nested;
    return x * nested;
  }
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm's split of ln 2
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const int k = -static_cast<int>(x * 1.4426950408889634 + 0.5);  // round(-x / ln2), k <= 0
  const double r = (-x - k * kLn2Hi) - k * kLn2Lo;
  double series = 1.0;
  for (int n = 17; n >= 1; --n) series = 1.0 + r / n * series;
  const uint64_t scale_bits = static_cast<uint64_t>(1023 + k) << 52;  // 2^k, normal for k >= -58
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return 1.0 - series * scale;
}

// 1 / p(s): the number of objects of size `size` that one sample of that size represents.
inline double SampleScale(double size, double rate) {
  if (rate <= 1 || size <= 0) return 1.0;
  double p = OneMinusExpOfMinus(size / rate);  // 1 - exp(-s/R), accurate for tiny s/R
  return p > 0 ? 1.0 / p : 1.0;
}

// Estimated bytes represented by one sampled object of `size` bytes.
inline double SampleBytesEstimate(double size, double rate) {
  return size * SampleScale(size, rate);
}

// Un-samples a line of `count` sampled objects totalling `bytes`, as the pprofs do.
struct Unsampled {
  double count;
  double bytes;
};
inline Unsampled UnsampleLine(int64_t count, int64_t bytes, double rate) {
  if (count <= 0 || bytes <= 0) return {0, 0};
  double scale = SampleScale(static_cast<double>(bytes) / static_cast<double>(count), rate);
  return {static_cast<double>(count) * scale, static_cast<double>(bytes) * scale};
}

}  // namespace heapkit::alloc

namespace heapkit::alloc {

// The Horvitz-Thompson variance one sampled object of `size` bytes adds to the estimates it is
// part of: (1 - p) / p^2 to an object count (its weight 1/p, squared, times 1 - p) and
// w^2 (1 - p) to a byte total (w = s/p). Variances of independently sampled objects add, so a
// set's variance is the sum over its sampled members; an unbiased estimate of the estimate's
// variance. 0 when every allocation is recorded (rate <= 1) and for sizes so large that p is 1.
struct SampleVariance {
  double objects;
  double bytes;
};
inline SampleVariance SampleVarianceOf(double size, double rate) {
  if (rate <= 1 || size <= 0) return {0, 0};
  const double p = OneMinusExpOfMinus(size / rate);
  if (!(p > 0)) return {0, 0};
  const double odds = (1 - p) / (p * p);
  return {odds, size * size * odds};
}

}  // namespace heapkit::alloc
