#include "alloc/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace heapkit::alloc {
namespace {

TEST(SamplerTest, NaturalLogMatchesLibm) {
  // Over the whole range NextUniform() produces, and beyond: relative error below 1e-10.
  for (double x : {0x1.0p-53, 1e-300, 1e-10, 0.001, 0.25, 0.5, 0.70710678, 0.7071068, 0.9, 0.999999,
                   1.0, 1.41421356, 1.5, 2.0, 3.0, 10.0, 1e10, 1e300}) {
    EXPECT_NEAR(heapkit::alloc::NaturalLog(x), std::log(x), 1e-10 * std::fabs(std::log(x)) + 1e-15)
        << x;
  }
  heapkit::alloc::Sampler s;
  s.Seed(42);
  for (int i = 0; i < 100000; ++i) {
    double u = s.NextUniform();
    ASSERT_NEAR(heapkit::alloc::NaturalLog(u), std::log(u), 1e-10 * std::fabs(std::log(u)) + 1e-15)
        << u;
  }
}

TEST(SamplerTest, SpecialMeans) {
  Sampler s;
  EXPECT_EQ(s.NextGap(1), Sampler::kExactGap);  // every allocation fires, malloc(0) too
  EXPECT_LT(Sampler::kExactGap, 0);
  EXPECT_EQ(s.NextGap(0), Sampler::kOffRecheckBytes);
  EXPECT_EQ(s.NextGap(-5), Sampler::kOffRecheckBytes);
}

TEST(SamplerTest, MeanAndExponentialDistribution) {
  const int64_t mean = 512 * 1024;
  const int n = 200000;
  Sampler s;
  s.Seed(12345);
  std::vector<double> gaps(n);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    gaps[i] = static_cast<double>(s.NextGap(mean));
    ASSERT_GE(gaps[i], 0);
    sum += gaps[i];
  }
  // The sample mean of n exponentials has relative standard deviation 1/sqrt(n) (0.22%);
  // allow 5 sigma.
  const double rel = std::fabs(sum / n - mean) / mean;
  EXPECT_LT(rel, 5.0 / std::sqrt(n)) << "sample mean " << sum / n;
  // Kolmogorov-Smirnov against Exp(1/mean): critical value at alpha = 0.001 is 1.95/sqrt(n).
  std::sort(gaps.begin(), gaps.end());
  double d = 0;
  for (int i = 0; i < n; ++i) {
    const double cdf = 1 - std::exp(-gaps[i] / mean);
    d = std::max(d,
                 std::max(cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf));
  }
  EXPECT_LT(d, 1.95 / std::sqrt(n)) << "KS distance " << d;
}

TEST(SamplerTest, SampledFractionOfObjectsMatchesFormula) {
  // With the counter scheme, an object of b bytes is sampled with p = 1 - exp(-b/mean).
  const int64_t mean = 4096;
  const int64_t b = 1024;
  const int n = 400000;
  Sampler s;
  s.Seed(99);
  int64_t left = s.NextGap(mean);
  int sampled = 0;
  for (int i = 0; i < n; ++i) {
    left -= b;
    if (left < 0) {
      ++sampled;
      left = s.NextGap(mean);
    }
  }
  const double p = 1 - std::exp(-static_cast<double>(b) / mean);
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(sampled, n * p, 5 * sigma + n * 0.01);
}

}  // namespace
}  // namespace heapkit::alloc
