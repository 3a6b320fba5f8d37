// The un-sampling math: exact values, and a Monte-Carlo run of the sampler's process
// (exponential byte gaps of mean R) showing the Horvitz-Thompson estimate is unbiased.
#include "alloc/sample_weight.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "profiler/table/sample_estimate.h"

namespace heapkit::prof {
namespace {

// The runtime's own 1 - exp(-x) (no libm) against libm's -expm1(-x) over 1e-12 .. 60, through
// every branch (series, reduced exponential, saturation): within 2 ulp.
TEST(SampleWeight, OneMinusExpOfMinusMatchesLibm) {
  int checked = 0;
  for (double x = 1e-12; x < 60; x *= 1.001, ++checked) {
    const double want = -std::expm1(-x);
    EXPECT_NEAR(alloc::OneMinusExpOfMinus(x), want, want * 4.5e-16) << x;
  }
  EXPECT_GT(checked, 30000);
  EXPECT_EQ(alloc::OneMinusExpOfMinus(0), 0.0);
  EXPECT_EQ(alloc::OneMinusExpOfMinus(1e300), 1.0);
}

TEST(SampleWeight, RateOneIsExact) {
  EXPECT_EQ(alloc::SampleScale(100, 1), 1.0);
  EXPECT_EQ(alloc::SampleScale(100, 0), 1.0);
  alloc::Unsampled u = alloc::UnsampleLine(7, 700, 1);
  EXPECT_EQ(u.count, 7);
  EXPECT_EQ(u.bytes, 700);
}

TEST(SampleWeight, MatchesFormula) {
  const double r = 524288;
  for (double s : {1.0, 16.0, 1000.0, 524288.0, 10e6}) {
    double expected = 1.0 / (1.0 - std::exp(-s / r));
    EXPECT_NEAR(alloc::SampleScale(s, r), expected, expected * 1e-9)
        << s;  // expm1 is the more precise one
  }
  // Large objects are (almost) always sampled: weight -> 1.
  EXPECT_NEAR(alloc::SampleScale(100 * r, r), 1.0, 1e-12);
  // Tiny objects: weight ~ R/s.
  EXPECT_NEAR(alloc::SampleScale(8, r), r / 8, r / 8 * 1e-4);
  alloc::Unsampled u = alloc::UnsampleLine(3, 3 * 1024, r);
  EXPECT_NEAR(u.count, 3 * alloc::SampleScale(1024, r), 1e-6);
  EXPECT_NEAR(u.bytes, 3 * 1024 * alloc::SampleScale(1024, r), 1e-3);
  EXPECT_EQ(alloc::UnsampleLine(0, 0, r).count, 0);
}

// Simulate the allocator: a byte counter drawn from Exp(mean R); an allocation of s bytes is
// sampled when it crosses the counter. Then compare the un-sampled estimate with the truth.
TEST(SampleWeight, MonteCarloUnbiased) {
  std::mt19937_64 rng(12345);
  std::exponential_distribution<double> gap(1.0 / 65536.0);
  const double rate = 65536;
  const int64_t sizes[] = {16, 256, 4096, 100000};
  for (int64_t size : sizes) {
    const int64_t n = 2000000 / (size / 16 + 1) + 20000;
    double counter = gap(rng);
    int64_t sampled = 0;
    for (int64_t i = 0; i < n; ++i) {
      counter -= static_cast<double>(size);
      if (counter < 0) {
        ++sampled;
        // After a sample, the next gap starts fresh (memorylessness makes this equivalent).
        counter = gap(rng);
      }
    }
    alloc::Unsampled est = alloc::UnsampleLine(sampled, sampled * size, rate);
    double truth = static_cast<double>(n * size);
    // Relative standard deviation of the estimate: sqrt((1-p)/(n p)); allow 5 sigma.
    double p = 1 - std::exp(-static_cast<double>(size) / rate);
    double rel_sd = std::sqrt((1 - p) / (static_cast<double>(n) * p));
    EXPECT_NEAR(est.bytes / truth, 1.0, 5 * rel_sd + 1e-9)
        << "size " << size << " sampled " << sampled << " of " << n;
  }
}

TEST(SizeKey, GroupsWithinNineteenPercent) {
  const int64_t rate = 524288;
  EXPECT_EQ(SizeKey(12345, 1), 0u);
  uint32_t prev = 0;
  uint64_t group_start = 8;
  for (uint64_t s = 8; s < 1 << 20; s += 1 + s / 64) {
    uint32_t k = SizeKey(s, rate);
    ASSERT_GE(k, prev) << s;
    if (k != prev) group_start = s;
    EXPECT_LT(static_cast<double>(s) / static_cast<double>(group_start), 1.25) << s;
    prev = k;
  }
  EXPECT_NE(SizeKey(7, rate), SizeKey(8, rate));
}

}  // namespace
}  // namespace heapkit::prof
