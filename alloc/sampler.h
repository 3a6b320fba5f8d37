// Sampler: picks the byte gaps between sampled allocations.
//
// Math: to sample each allocated byte independently with probability 1/mean, the gap between
// sampled bytes is geometric, which for large means is the exponential distribution
// Exp(1/mean): gap = -ln(U) * mean, U uniform in (0, 1]. An allocation of n bytes is sampled
// when the per-thread counter (bytes left until the next sampled byte) goes below zero while
// subtracting n, so the probability of sampling an n-byte object is 1 - exp(-n/mean): exactly
// what pprof's un-sampling formula (alloc/sample_weight.h) assumes. mean == 1 samples everything:
// the gap is then kExactGap (-1, no draw), so that even malloc(0), which subtracts nothing,
// fires.
//
// RNG: xoshiro256**-like quality is not needed; splitmix64 is fast, passes BigCrush and needs
// 8 bytes of state.
//
// ln(U) is computed here (NaturalLog), not by libm's log: the allocator library depends on libc
// alone (alloc/internal/cxx_runtime_weak.h). Its relative error is below 1e-10, far under the
// statistical noise of any sample.
#pragma once

#include <cstdint>
#include <cstring>

namespace heapkit::alloc {

// Natural logarithm of a positive, finite, normal double. x = m * 2^e with m in [sqrt(1/2),
// sqrt(2)); ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the odd series to s^13
// leaves a relative error under 1e-10.
inline double NaturalLog(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);  // m in [1, 2)
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++exponent;
  }
  double s = (m - 1.0) / (m + 1.0);
  double s2 = s * s;
  double series =
      1.0 +
      s2 * (1.0 / 3 +
            s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13))))));
  return exponent * 0.69314718055994530942 + 2.0 * s * series;
}

class Sampler {
 public:
  // Gap used while sampling is off: the slow path re-checks the parameter this often.
  static constexpr int64_t kOffRecheckBytes = int64_t{1} << 24;
  // Gap for mean 1 (exact mode): below zero whatever the size, 0 included.
  static constexpr int64_t kExactGap = -1;

  void Seed(uint64_t seed) { state_ = seed; }
  uint64_t NextRandom() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // A uniform double in (0, 1].
  double NextUniform() { return static_cast<double>((NextRandom() >> 11) + 1) * 0x1.0p-53; }

  // Next gap in bytes for the given mean (≤ 0: sampling off -> kOffRecheckBytes).
  int64_t NextGap(int64_t mean) {
    if (mean <= 0) return kOffRecheckBytes;
    if (mean == 1) return kExactGap;
    double gap = -NaturalLog(NextUniform()) * static_cast<double>(mean);
    if (gap > 9.0e18) return INT64_MAX / 2;
    return static_cast<int64_t>(gap);
  }

 private:
  uint64_t state_ = 0x853c49e6748fea9bULL;
};

}  // namespace heapkit::alloc
