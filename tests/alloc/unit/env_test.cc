#include "alloc/internal/env.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace heapkit::internal {
namespace {

TEST(EnvTest, ParseInt64) {
  int64_t v;
  EXPECT_TRUE(ParseInt64("42", false, &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(ParseInt64(" -7 ", false, &v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(ParseInt64("64k", true, &v));
  EXPECT_EQ(v, 64 * 1024);
  EXPECT_TRUE(ParseInt64("3MB", true, &v));
  EXPECT_EQ(v, 3 << 20);
  EXPECT_FALSE(ParseInt64("64k", false, &v));
  EXPECT_FALSE(ParseInt64("", false, &v));
  EXPECT_FALSE(ParseInt64("12x", true, &v));
  EXPECT_FALSE(ParseInt64("99999999999999999999", false, &v));
  EXPECT_TRUE(ParseInt64("9223372036854775807", false, &v));
  EXPECT_EQ(v, INT64_MAX);
}

TEST(EnvTest, ParseDoubleAndBool) {
  double d;
  EXPECT_TRUE(ParseDouble("1.5", &d));
  EXPECT_DOUBLE_EQ(d, 1.5);
  EXPECT_TRUE(ParseDouble("2e3", &d));
  EXPECT_DOUBLE_EQ(d, 2000);
  EXPECT_FALSE(ParseDouble("abc", &d));
  EXPECT_FALSE(ParseDouble("1.0.0", &d));
  bool b;
  EXPECT_TRUE(ParseBool("Yes", &b));
  EXPECT_TRUE(b);
  EXPECT_TRUE(ParseBool("off", &b));
  EXPECT_FALSE(b);
  EXPECT_FALSE(ParseBool("maybe", &b));
}

TEST(EnvTest, MalformedValueWarnsOnceAndUsesDefault) {
  setenv("HEAPKIT_TEST_ENV_INT", "12q", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(EnvInt64("HEAPKIT_TEST_ENV_INT", 5, 0, 100), 5);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "heapkit: ignoring HEAPKIT_TEST_ENV_INT='12q': not an integer; using default 5\n");
  setenv("HEAPKIT_TEST_ENV_INT", "1000", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(EnvInt64("HEAPKIT_TEST_ENV_INT", 5, 0, 100), 5);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("must be between 0 and 100"), std::string::npos) << err;
  setenv("HEAPKIT_TEST_ENV_INT", "77", 1);
  EXPECT_EQ(EnvInt64("HEAPKIT_TEST_ENV_INT", 5, 0, 100), 77);
  unsetenv("HEAPKIT_TEST_ENV_INT");
  EXPECT_EQ(EnvInt64("HEAPKIT_TEST_ENV_INT", 5, 0, 100), 5);
  setenv("HEAPKIT_TEST_ENV_D", "0.25", 1);
  EXPECT_DOUBLE_EQ(EnvDouble("HEAPKIT_TEST_ENV_D", 1, 0, 10), 0.25);
  unsetenv("HEAPKIT_TEST_ENV_D");
}

}  // namespace
}  // namespace heapkit::internal
