// CHECK(cond) for the gperftools-header programs here: prints the failing condition and counts
// it; main returns failures == 0 ? 0 : 1. (They are built without gtest, against Debian's
// gperftools headers, as a gperftools user's program would be.)
#pragma once

#include <cstdio>

inline int failures = 0;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)
