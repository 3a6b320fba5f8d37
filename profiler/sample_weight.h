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
#pragma once

#include <cmath>
#include <cstdint>

namespace heapkit::prof {

// 1 / p(s): the number of objects of size `size` that one sample of that size represents.
inline double SampleScale(double size, double rate) {
  if (rate <= 1 || size <= 0) return 1.0;
  double p = -std::expm1(-size / rate);  // 1 - exp(-s/R), accurate for tiny s/R
  return p > 0 ? 1.0 / p : 1.0;
}

// Estimated bytes represented by one sampled object of `size` bytes.
inline double SampleBytesEstimate(double size, double rate) { return size * SampleScale(size, rate); }

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

}  // namespace heapkit::prof
