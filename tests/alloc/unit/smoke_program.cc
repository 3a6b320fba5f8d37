// Runs under LD_PRELOAD=libheapkit_minimal.so: checks that heapkit is the allocator in use and
// that the basic entry points work across threads.
#include <dlfcn.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

int main() {
  bool active = dlsym(RTLD_DEFAULT, "tc_version") != nullptr;
  std::vector<std::thread> threads;
  std::vector<std::string> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &results] {
      std::vector<std::unique_ptr<char[]>> keep;
      size_t sum = 0;
      for (int i = 0; i < 20000; ++i) {
        size_t n = static_cast<size_t>((i * 7919 + t) % 5000) + 1;
        char* p = static_cast<char*>(malloc(n));
        memset(p, 'a' + t, n);
        p = static_cast<char*>(realloc(p, n * 2));
        sum += static_cast<unsigned char>(p[n - 1]);
        free(p);
        if (i % 100 == 0) keep.emplace_back(new char[n]);
      }
      results[t] = std::to_string(sum);
    });
  }
  for (auto& th : threads) th.join();
  void* big = calloc(1, 10 << 20);
  bool zero = static_cast<char*>(big)[5 << 20] == 0 && malloc_usable_size(big) >= (10u << 20);
  free(big);
  void* aligned = aligned_alloc(4096, 100);
  bool ok = zero && (reinterpret_cast<uintptr_t>(aligned) % 4096 == 0);
  free(aligned);
  for (int t = 0; t < 4; ++t) ok = ok && results[t] == std::to_string(20000ull * ('a' + t));
  printf("%s; smoke %s\n", active ? "heapkit active" : "heapkit NOT active", ok ? "ok" : "FAILED");
  return ok && active ? 0 : 1;
}
