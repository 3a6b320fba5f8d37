// Benchmark program: allocation-heavy work (many short-lived objects of mixed sizes, a rolling
// working set) with no leaks. Measures the cost of recording every allocation under HEAPCHECK.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 4000000;
  const int kSlots = 4096;
  void** slots = static_cast<void**>(std::calloc(kSlots, sizeof(void*)));
  uint64_t x = 88172645463325252ULL, sum = 0;
  for (long i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int slot = static_cast<int>(x % kSlots);
    size_t size = 16 + (x >> 20) % 240;
    if ((x >> 40) % 64 == 0) size = 1024 + (x >> 30) % 8192;
    std::free(slots[slot]);
    char* p = static_cast<char*>(std::malloc(size));
    p[0] = static_cast<char>(i);
    sum += static_cast<unsigned char>(p[0]);
    slots[slot] = p;
  }
  for (int i = 0; i < kSlots; ++i) std::free(slots[i]);
  std::free(slots);
  std::printf("%llu\n", static_cast<unsigned long long>(sum));
  return 0;
}
