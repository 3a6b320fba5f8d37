// HEAPKIT_DCHECK in the debug build (-DHEAPKIT_DEBUG=ON; this file is built only there): a
// failed check prints one line naming the file, the line and the condition, then aborts; and
// the checks placed at the allocator's invariants fire when one is broken.
#include "alloc/internal/dcheck.h"

#include <gtest/gtest.h>

#include "alloc/allocator.h"

#if !HEAPKIT_DCHECK_IS_ON
#error "dcheck_test.cc is built only with -DHEAPKIT_DEBUG=ON"
#endif

namespace heapkit::alloc {
namespace {

class DcheckTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(DcheckTest, PassingCheckEvaluatesItsConditionOnce) {
  int evaluations = 0;
  HEAPKIT_DCHECK(++evaluations > 0);
  EXPECT_EQ(evaluations, 1);
}

TEST_F(DcheckTest, FailedCheckNamesFileLineAndConditionThenAborts) {
  const int broken = 3;
  EXPECT_DEATH(HEAPKIT_DCHECK(broken == 4),
               "^heapkit: DCHECK failed: [^\n]*dcheck_test\\.cc:[0-9]+: broken == 4\n$");
}

// Size-class bounds: class 0 is the large "class", which has no pages-per-span entry.
TEST_F(DcheckTest, SizeClassOutOfBoundsFires) {
  EnsureInit();
  EXPECT_DEATH(g_state.sizemap.ClassPages(0), "DCHECK failed: .*size_classes\\.h:[0-9]+: ");
}

// Span states: a span handed back to the page heap twice (the second time it is already free).
TEST_F(DcheckTest, SpanFreedTwiceFires) {
  void* big = Malloc(1 << 20);
  ASSERT_NE(big, nullptr);
  Span* span = g_state.pagemap.GetSpan(reinterpret_cast<uintptr_t>(big) >> kPageShift);
  ASSERT_NE(span, nullptr);
  EXPECT_DEATH(
      {
        g_state.pageheap.Delete(span);
        g_state.pageheap.Delete(span);
      },
      "DCHECK failed: .*page_heap\\.cc:[0-9]+: span->location_ == Span::kInUse");
  Free(big);
}

}  // namespace
}  // namespace heapkit::alloc
