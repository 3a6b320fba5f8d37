#include <gtest/gtest.h>

#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {
namespace {

TEST(ValueFormat, ReadableUnitsNeverZeroPointZero) {
  EXPECT_EQ(FormatValue(0, ValueUnit::kBytes), "0");
  EXPECT_EQ(FormatValue(17, ValueUnit::kBytes), "17B");
  EXPECT_EQ(FormatValue(1536, ValueUnit::kBytes), "1.50kB");
  EXPECT_EQ(FormatValue(3 * 1048576.0, ValueUnit::kBytes), "3.00MB");
  EXPECT_EQ(FormatValue(200 * 1048576.0, ValueUnit::kBytes), "200MB");
  EXPECT_EQ(FormatValue(-2048, ValueUnit::kBytes), "-2.00kB");
  EXPECT_EQ(FormatValue(5.0 * (1ull << 40), ValueUnit::kBytes), "5.00TB");
  EXPECT_EQ(FormatValue(1536, ValueUnit::kBytes, true), "1536");
  EXPECT_EQ(FormatValue(41.6, ValueUnit::kObjects), "42");
  EXPECT_EQ(FormatValue(-0.2, ValueUnit::kObjects), "0");
  for (double v : {1.0, 10.0, 100.0, 1000.0, 5000.0, 1e6, 1e9}) {
    EXPECT_EQ(FormatValue(v, ValueUnit::kBytes).find("0.0"), std::string::npos) << v;
  }
}

TEST(ValueFormat, Percent) {
  EXPECT_EQ(FormatPercent(1, 4), "25.00%");
  EXPECT_EQ(FormatPercent(1, 0), "0.00%");
}

}  // namespace
}  // namespace heapkit::pprof
