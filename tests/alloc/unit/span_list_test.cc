// SpanList: a zero head (as .bss starts) is an empty list that links itself on its first Push.
#include <gtest/gtest.h>

#include <cstring>
#include <new>

#include "alloc/span.h"

namespace heapkit::alloc {
namespace {

TEST(SpanListTest, ZeroBytesAreAnEmptyList) {
  alignas(SpanList) unsigned char storage[sizeof(SpanList)];
  std::memset(storage, 0, sizeof storage);  // what an unused list in .bss looks like
  const SpanList& list = *std::launder(reinterpret_cast<SpanList*>(storage));
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.first(), nullptr);
  EXPECT_EQ(list.last(), nullptr);
  EXPECT_EQ(list.size(), 0u);
}

TEST(SpanListTest, PushIsLifoAndRemoveUnlinks) {
  SpanList list;
  Span a, b, c;
  list.Push(&a);
  list.Push(&b);
  list.Push(&c);
  EXPECT_FALSE(list.empty());
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list.first(), &c);
  EXPECT_EQ(list.next(&c), &b);
  EXPECT_EQ(list.next(&b), &a);
  EXPECT_EQ(list.next(&a), nullptr);
  EXPECT_EQ(list.last(), &a);
  SpanList::Remove(&b);
  EXPECT_EQ(b.next_, nullptr);
  EXPECT_EQ(list.next(&c), &a);
  EXPECT_EQ(list.last(), &a);
  SpanList::Remove(&c);
  SpanList::Remove(&a);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.first(), nullptr);
  list.Push(&b);  // a list emptied by Remove (self-linked head) takes spans again
  EXPECT_EQ(list.first(), &b);
  EXPECT_EQ(list.last(), &b);
  EXPECT_EQ(list.size(), 1u);
}

TEST(SpanListTest, SpanMovesBetweenLists) {
  SpanList from, to;
  Span s;
  from.Push(&s);
  SpanList::Remove(&s);
  to.Push(&s);
  EXPECT_TRUE(from.empty());
  EXPECT_EQ(to.first(), &s);
  EXPECT_EQ(to.next(&s), nullptr);
}

}  // namespace
}  // namespace heapkit::alloc
