// Cheap deterministic random numbers for test and benchmark programs: xorshift64, no
// allocation, one per thread (seeded from the thread's index so runs repeat).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::testing {

class XorshiftRng {
 public:
  explicit XorshiftRng(uint64_t seed) : x_(seed * 0x9e3779b97f4a7c15ULL + 1) {}
  uint64_t Next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return x_;
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }

 private:
  uint64_t x_;
};

}  // namespace heapkit::testing
