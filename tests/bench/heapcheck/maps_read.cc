// What reading the address space adds to a check's stop: ProcMaps::Read (heapcheck/proc_maps.h,
// done with the world stopped) on a process with N extra mappings (single pages, alternately
// read-only and read-write, so that none merge). Prints the mappings read and the fastest and
// median of the reads in microseconds.
//   maps_read <extra mappings> [reads]
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_clock.h"
#include "heapcheck/proc_maps.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: maps_read <extra mappings> [reads]\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  const int reads = argc > 2 ? std::atoi(argv[2]) : 51;
  const long page = sysconf(_SC_PAGESIZE);
  char* base = static_cast<char*>(
      mmap(nullptr, 2 * n * page + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  for (long i = 0; i < n; ++i)
    mprotect(base + 2 * i * page, page, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE);
  heapkit::check::ProcMaps maps;
  std::vector<double> us;
  for (int r = 0; r < reads; ++r) {
    const double t0 = NowUs();
    if (!maps.Read()) return 1;
    us.push_back(NowUs() - t0);
  }
  std::sort(us.begin(), us.end());
  std::printf("%zu mappings: fastest %.0f us, median %.0f us\n", maps.size(), us.front(),
              us[us.size() / 2]);
  return 0;
}
