// heapkit_stress: a bounded-time allocator torture test, run under glibc, libheapkit_minimal.so,
// libheapkit.so with sampling at 1 + HEAPPROFILE, and HEAPCHECK=normal (see README.md).
//
//   heapkit_stress [--seconds N] [--no-fork] [--no-signals] [--rss-slack-mb M]
//                  [--rss-object-overhead B] [--seed S]
//
// Exit 0: every object kept its content, RSS stayed under the bound derived from the live bytes,
// every fork child finished cleanly, and everything was freed at the end (live counters zero).
// Exit 3: a check failed (one line "stress: FAIL: ..."). Exit 2: bad command line.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "allocation_calls.h"
#include "stress_state.h"
#include "workloads.h"
#include "../common/resident_bytes.h"

namespace hs = heapkit::stress;

namespace {

size_t ResidentBytes() {
  const size_t bytes = heapkit::testing::ResidentBytes();
  if (bytes == 0) hs::Fail("cannot read /proc/self/statm");
  return bytes;
}

[[noreturn]] void Usage(const char* why) {
  fprintf(stderr,
          "heapkit_stress: %s\nusage: heapkit_stress [--seconds N] [--no-fork] "
          "[--no-signals] [--rss-slack-mb M] [--rss-object-overhead B] [--seed S]\n",
          why);
  exit(2);
}

double NumberArg(int argc, char** argv, int* i) {
  if (*i + 1 >= argc) Usage((std::string("missing value after ") + argv[*i]).c_str());
  char* end = nullptr;
  double v = strtod(argv[++*i], &end);
  if (end == argv[*i] || *end != '\0' || v < 0)
    Usage((std::string("bad value '") + argv[*i] + "' for " + argv[*i - 1]).c_str());
  return v;
}

void ParseOptions(int argc, char** argv) {
  hs::Options& o = hs::g_options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seconds")
      o.seconds = NumberArg(argc, argv, &i);
    else if (a == "--no-fork")
      o.fork = false;
    else if (a == "--no-signals")
      o.signals = false;
    else if (a == "--rss-slack-mb")
      o.rss_slack_mb = static_cast<size_t>(NumberArg(argc, argv, &i));
    else if (a == "--rss-object-overhead")
      o.rss_object_overhead = static_cast<size_t>(NumberArg(argc, argv, &i));
    else if (a == "--seed")
      o.seed = static_cast<uint64_t>(NumberArg(argc, argv, &i));
    else
      Usage(("unknown option " + a).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  ParseOptions(argc, argv);
  const hs::Options& o = hs::g_options;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  hs::MakeCanaries();
  if (o.signals) hs::InstallSignalHandlers();
  const size_t rss_start = ResidentBytes();

  std::vector<std::thread> threads;
  for (int i = 0; i < o.consumers; ++i) threads.emplace_back(hs::Consumer, i);
  for (int i = 0; i < o.producers; ++i) threads.emplace_back(hs::Producer, i);
  for (int i = 0; i < o.reallocers; ++i) threads.emplace_back(hs::Reallocer, i);
  for (int i = 0; i < o.aligners; ++i) threads.emplace_back(hs::Aligner, i);
  for (int i = 0; i < o.churners; ++i) threads.emplace_back(hs::Churner, i);
  if (o.fork) threads.emplace_back(hs::Forker, 0);
  std::thread signaller;
  if (o.signals) signaller = std::thread(hs::Signaller, 0);

  // Watch RSS while the workloads run. Live bytes are bounded by construction (queue capacity,
  // fixed rings), so the RSS bound holds only if freed memory is really reused.
  auto start = std::chrono::steady_clock::now();
  size_t rss_max = 0, bound_at_max = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         o.seconds) {
    hs::SleepMicros(50000);
    size_t rss = ResidentBytes();
    size_t peak_live = static_cast<size_t>(hs::g_stats.peak_live_bytes.load());
    size_t peak_objs = static_cast<size_t>(hs::g_stats.peak_live_objects.load());
    size_t bound = rss_start + static_cast<size_t>(o.rss_factor * static_cast<double>(peak_live)) +
                   peak_objs * o.rss_object_overhead + (o.rss_slack_mb << 20);
    if (rss > rss_max) {
      rss_max = rss;
      bound_at_max = bound;
    }
    if (rss > bound)
      hs::Fail(
          "RSS %zu KiB exceeds the bound %zu KiB (start %zu KiB + %.1f x peak live %zu KiB + "
          "%zu objects x %zu B + %zu MiB)",
          rss >> 10, bound >> 10, rss_start >> 10, o.rss_factor, peak_live >> 10, peak_objs,
          o.rss_object_overhead, o.rss_slack_mb);
  }
  hs::g_stop.store(true);
  if (signaller.joinable()) signaller.join();
  for (auto& t : threads) t.join();
  hs::DrainQueues();
  hs::FreeCanaries();

  const hs::Stats& s = hs::g_stats;
  if (s.live_bytes.load() != 0 || s.live_objects.load() != 0)
    hs::Fail("%lld bytes in %lld objects still counted live after the drain",
             static_cast<long long>(s.live_bytes.load()),
             static_cast<long long>(s.live_objects.load()));
  printf(
      "stress: OK %.1f s: %llu allocations, %llu cross-thread frees, %llu reallocs, %llu aligned, "
      "%llu forks, %llu threads, %llu signals, %llu MiB verified\n",
      o.seconds, static_cast<unsigned long long>(s.allocations.load()),
      static_cast<unsigned long long>(s.cross_thread_frees.load()),
      static_cast<unsigned long long>(s.reallocs.load()),
      static_cast<unsigned long long>(s.aligned.load()),
      static_cast<unsigned long long>(s.forks.load()),
      static_cast<unsigned long long>(s.threads_created.load()),
      static_cast<unsigned long long>(s.signals_handled.load()),
      static_cast<unsigned long long>(s.verified_bytes.load() >> 20));
  printf(
      "stress: RSS start %zu KiB, max %zu KiB (bound then %zu KiB), "
      "peak live %lld KiB in %lld objects; allocation calls: %s\n",
      rss_start >> 10, rss_max >> 10, bound_at_max >> 10,
      static_cast<long long>(s.peak_live_bytes.load() >> 10),
      static_cast<long long>(s.peak_live_objects.load()), hs::calls::Name());
  return 0;
}
