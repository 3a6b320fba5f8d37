// The timeline's ground truth (run_timeline.py): three stacks, each a sawtooth on a known
// schedule — saw_a() ramps to 48 MiB in 1.0 s, saw_b() to 32 MiB in 1.5 s, saw_c() to 24 MiB
// in 0.7 s, in 64 KiB blocks, each freeing all its blocks at once when its period wraps —
// for 6 s, then a quiet 500 ms in which nothing is allocated.
// Prints one line per 5 ms step: "step <CLOCK_MONOTONIC ns after the step> <a> <b> <c>" (the
// bytes each stack holds from then until the next step), and for the quiet phase
// "quiet <ns from> <ns to> <generic.current_allocated_bytes>" (the allocator's counter, read
// at its start and checked unchanged at its end).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <vector>

namespace {

constexpr size_t kBlock = 64 * 1024;

long long Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct Saw {
  size_t top_blocks;
  long long period_ns;
  std::vector<void*> blocks;
};

__attribute__((noinline)) void saw_a(Saw& s) { s.blocks.push_back(malloc(kBlock)); }
__attribute__((noinline)) void saw_b(Saw& s) { s.blocks.push_back(malloc(kBlock)); }
__attribute__((noinline)) void saw_c(Saw& s) { s.blocks.push_back(malloc(kBlock)); }

void Drop(Saw& s) {
  for (void* p : s.blocks) free(p);
  s.blocks.clear();
}

size_t AllocatedBytes() {
  using Get = int (*)(const char*, size_t*);
  auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  size_t v = 0;
  if (get == nullptr || !get("generic.current_allocated_bytes", &v)) return 0;
  return v;
}

}  // namespace

int main() {
  Saw saws[3] = {{768, 1000000000LL, {}}, {512, 1500000000LL, {}}, {384, 700000000LL, {}}};
  void (*grow[3])(Saw&) = {saw_a, saw_b, saw_c};
  for (Saw& s : saws) s.blocks.reserve(s.top_blocks + 1);
  std::vector<char> out;
  out.reserve(1 << 20);
  char line[128];
  const long long start = Now();
  for (long long t = start; t - start < 6000000000LL; t = Now()) {
    for (int i = 0; i < 3; ++i) {
      Saw& s = saws[i];
      const long long phase = (t - start) % s.period_ns;
      const size_t want = static_cast<size_t>(s.top_blocks * phase / s.period_ns);
      if (want < s.blocks.size()) Drop(s);
      while (s.blocks.size() < want) grow[i](s);
    }
    int n = snprintf(line, sizeof(line), "step %lld %zu %zu %zu\n", Now(),
                     saws[0].blocks.size() * kBlock, saws[1].blocks.size() * kBlock,
                     saws[2].blocks.size() * kBlock);
    out.insert(out.end(), line, line + n);
    usleep(5000);
  }
  const long long quiet_from = Now();
  const size_t before = AllocatedBytes();
  usleep(500000);
  const size_t after = AllocatedBytes();
  const long long quiet_to = Now();
  fwrite(out.data(), 1, out.size(), stdout);
  if (before == after) printf("quiet %lld %lld %zu\n", quiet_from, quiet_to, before);
  fflush(stdout);
  for (Saw& s : saws) Drop(s);
  return 0;
}
