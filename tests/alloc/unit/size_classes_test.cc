#include "alloc/size_classes.h"

#include <gtest/gtest.h>

#include "alloc/page_map.h"

namespace heapkit::alloc {
namespace {

class SizeClassesTest : public ::testing::Test {
 protected:
  void SetUp() override { map_.Init(512); }
  SizeMap map_;
};

TEST_F(SizeClassesTest, EverySizeMapsToTheSmallestFittingClass) {
  for (size_t s = 0; s <= kMaxSize; ++s) {
    uint32_t cls = map_.SizeClass(s);
    ASSERT_GE(cls, 1u);
    ASSERT_LT(static_cast<int>(cls), map_.num_classes());
    ASSERT_GE(map_.ClassSize(cls), s) << "size " << s;
    if (cls > 1) {
      ASSERT_LT(map_.ClassSize(cls - 1), s) << "size " << s << " not in smallest class";
    }
  }
  EXPECT_EQ(map_.ClassSize(map_.SizeClass(kMaxSize)), kMaxSize);
}

TEST_F(SizeClassesTest, WasteAndAlignmentBounds) {
  ASSERT_LT(map_.num_classes(), kNumClassesMax);
  for (int c = 1; c < map_.num_classes(); ++c) {
    const size_t size = map_.ClassSize(c);
    if (c > 1) {
      ASSERT_GT(size, map_.ClassSize(c - 1));
    }
    // 16-byte alignment for every class >= 16 (only the 8-byte class is smaller).
    if (size >= 16) {
      EXPECT_EQ(size % 16, 0u) << size;
    } else
      EXPECT_EQ(size, 8u);
    // Internal waste: the worst request for this class is previous class + 1.
    if (c > 1) {
      const size_t worst = map_.ClassSize(c - 1) + 1;
      if (worst > 128) {
        EXPECT_LE((size - worst) * 8, worst) << "class " << size << " wastes more than 12.5%";
      } else {
        EXPECT_LE(size - worst, 15u);  // bounded by the 16-byte alignment step
      }
    }
    // Span tail waste <= 1/8, at least one object, sane batches.
    const size_t span = map_.ClassPages(c) * kPageSize;
    EXPECT_GE(map_.ObjectsPerSpan(c), 1u);
    EXPECT_EQ(map_.ObjectsPerSpan(c), span / size);
    EXPECT_LE((span % size) * 8, span) << "class " << size;
    EXPECT_GE(map_.NumToMove(c), 2);
    EXPECT_LE(map_.NumToMove(c), 512);
  }
}

TEST_F(SizeClassesTest, DivMagicDetectsObjectStarts) {
  for (int c = 1; c < map_.num_classes(); ++c) {
    const uint64_t size = map_.ClassSize(c);
    const uint64_t magic = map_.DivMagic(c);
    for (uint64_t off : {uint64_t{0}, size, 2 * size, size - 8, size + 8, size * 3 + 16,
                         uint64_t{kPageSize} + kMaxSize - 1}) {
      bool divisible = off * magic <= magic - 1;
      ASSERT_EQ(divisible, off % size == 0) << "size " << size << " off " << off;
    }
  }
}

// The free fast path multiplies x = (info (+1) << 52) + offset by FreeMagic(info): those bits
// must drop out, every offset a free can see (< page + object size) must classify exactly, and
// class 0 or a sampled info must read magic 0 (always the slow path).
TEST_F(SizeClassesTest, FreeMagicByInfoWordIgnoresInfoBits) {
  EXPECT_EQ(map_.FreeMagic(0), 0u);
  for (int c = 1; c < map_.num_classes(); ++c) {
    const uint32_t info = PageMap::InfoForClass(c);
    EXPECT_EQ(map_.FreeMagic(info | PageMap::kSampledBit), 0u) << c;
    const uint64_t magic = map_.FreeMagic(info);
    ASSERT_EQ(magic, map_.DivMagic(c));
    const uint64_t size = map_.ClassSize(c);
    for (uint64_t off = 0; off < kPageSize + size; off += 8) {
      for (uint64_t high : {uint64_t{info}, uint64_t{info} + 1}) {  // + a carry from the add
        const uint64_t x = (high << PageMap::kInfoShift) + off;
        ASSERT_EQ(x * magic < magic, off % size == 0) << "size " << size << " off " << off;
      }
    }
  }
}

TEST_F(SizeClassesTest, TransferNumObjCapsBatches) {
  SizeMap small;
  small.Init(8);
  for (int c = 1; c < small.num_classes(); ++c) {
    EXPECT_LE(small.NumToMove(c), 8);
    EXPECT_GE(small.NumToMove(c), 2);
  }
}

}  // namespace
}  // namespace heapkit::alloc
