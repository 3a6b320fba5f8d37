// profiler/http/process_symbolizer.h: /pprof/symbol's lookups in this very process.
#include "profiler/http/process_symbolizer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace heapkit::prof::http {
namespace {

__attribute__((noinline)) int ProcessSymbolizerTestTarget(int x) { return x * 3 + 1; }

uint64_t TargetAddress() { return reinterpret_cast<uint64_t>(&ProcessSymbolizerTestTarget) + 2; }

TEST(ProcessSymbolizer, NamesCodeAndNothingElse) {
  const std::vector<uint64_t> addresses = {TargetAddress(), 0x10, 1ull << 46};
  bool complete = false;
  const std::vector<std::string> names = FunctionsAt(addresses, 1000000000, &complete);
  ASSERT_TRUE(complete);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_NE(names[0].find("ProcessSymbolizerTestTarget"), std::string::npos) << names[0];
  EXPECT_EQ(names[1], "");
  EXPECT_EQ(names[2], "");
}

TEST(ProcessSymbolizer, StopsAtTheCpuBudget) {
  const std::vector<uint64_t> addresses(1000, TargetAddress());
  bool complete = true;
  const std::vector<std::string> names = FunctionsAt(addresses, 0, &complete);
  EXPECT_FALSE(complete);
  // The clock is read every 64 lookups: the first read is past a budget of zero.
  ASSERT_EQ(names.size(), 63u);
  EXPECT_NE(names.back().find("ProcessSymbolizerTestTarget"), std::string::npos);
}

}  // namespace
}  // namespace heapkit::prof::http
