// What scanning the program's anonymous memory as roots adds to a check's stop
// (heapcheck/anonymous_roots.h): maps <GiB> of private anonymous memory, writes every page
// (resident), and exits under the checker; anonymous_scan.sh compares the stop with
// HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=true and false.
//   anonymous_scan <MiB> <words: small | heap | reserved>
//   small     every word a small integer (no heap address: the flood's range test rejects it)
//   heap      every 8th word the address of one of 1,000 live heap objects (a lookup each)
//   reserved  the mapping is never written (not resident: only its residency is read)
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

void* g_objects[1000];  // live: a global holds them

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: anonymous_scan <MiB> small|heap|reserved\n");
    return 2;
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10) << 20;
  const char* words = argv[2];
  auto* arena = static_cast<uintptr_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (arena == MAP_FAILED) return 2;
  for (auto& o : g_objects) o = std::malloc(64);
  const size_t n = bytes / sizeof(uintptr_t);
  if (std::strcmp(words, "small") == 0) {
    for (size_t i = 0; i < n; ++i) arena[i] = i & 0xffff;
  } else if (std::strcmp(words, "heap") == 0) {
    for (size_t i = 0; i < n; ++i)
      arena[i] = i % 8 == 0 ? reinterpret_cast<uintptr_t>(g_objects[(i / 8) % 1000]) : i & 0xffff;
  }
  std::printf("%zu MiB %s\n", bytes >> 20, words);
  return 0;
}
