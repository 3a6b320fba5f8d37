// One check at a time (heapcheck/check_gate.h): the program's own whole-program checks — a
// loop of HeapLeakChecker::NoGlobalLeaks(), and the exit check — while a client asks
// /debug/pprof/leaks back to back, in a program with a known set of leaks and two threads that
// allocate and free without pause (patterns/checks_beside_live.cc). Every check, of either kind,
// must find exactly the planted leaks; a live request the gate refuses must say so (503 or
// 429, with Retry-After). Before the gate, each checker tried to stop the other's thread and
// they shared the scratch memory and the saved sampling parameter: results without a check
// ("no result"), stop timeouts, false leaks, missed ones.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "run_process.h"

namespace heapkit::test {
namespace {

constexpr char kTruthLine[] = "truth: leaked 93060 bytes in 140 objects";
constexpr char kReportLine[] = "Leak check _main_ detected leaks of 93060 bytes in 140 objects";

std::string ScratchDir(const std::string& name) {
  std::string dir = "/tmp/heapcheck_check_gate_" + name + "_" + std::to_string(getpid());
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

std::vector<std::string> Env(const std::string& dir) {
  // The spacing's floor off: live checks as often as the 5 % share allows, so that they meet
  // the program's checks.
  return {"HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir, "HEAP_CHECK_MAX_LEAKS=2",
          "HEAP_CHECK_LIVE_MIN_INTERVAL_MS=0"};
}

// Lines the checker prints when a check went wrong, whatever its totals.
void ExpectNoCheckerTrouble(const std::string& err) {
  for (const char* trouble : {"no result", "no check done", "could not be stopped",
                              "did not answer", "from inside a check", "WARNING"})
    EXPECT_EQ(err.find(trouble), std::string::npos) << trouble << " in:\n" << err;
}

TEST(ChecksOneAtATime, ExplicitChecksBesideLiveChecksAreExact) {
  const std::string dir = ScratchDir("explicit");
  constexpr int kChecks = 20;
  ProcessResult r =
      RunProcess({HC_CHECKS_BESIDE_LIVE, "explicit", std::to_string(kChecks)}, Env(dir), 120);
  ASSERT_FALSE(r.timed_out) << r.err.substr(0, 4000);
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 4000);
  std::istringstream out(r.out);
  std::string line;
  ASSERT_TRUE(std::getline(out, line));
  EXPECT_EQ(line, kTruthLine);
  int exact = 0;
  long ok = -1, wrong = -1, busy = -1, too_soon = -1, other = -1;
  while (std::getline(out, line)) {
    if (line.rfind("explicit ", 0) == 0) {
      EXPECT_EQ(line, "explicit 93060 140") << "check " << exact;
      exact += line == "explicit 93060 140";
    } else {
      ASSERT_EQ(std::sscanf(line.c_str(), "live ok=%ld wrong=%ld busy=%ld too_soon=%ld other=%ld",
                            &ok, &wrong, &busy, &too_soon, &other),
                5)
          << line;
      EXPECT_EQ(wrong, 0) << line;
      EXPECT_EQ(other, 0) << line;
      // The client met both: a check of its own that ran, and the program's check running.
      EXPECT_GE(ok, 1) << line;
      EXPECT_GE(busy, 1) << line;
    }
  }
  EXPECT_EQ(exact, kChecks) << r.out;
  EXPECT_GE(ok, 0) << "no tally line:\n" << r.out;
  ExpectNoCheckerTrouble(r.err);
  std::printf("%d explicit checks exact; %s\n", exact, r.out.substr(r.out.rfind("live ")).c_str());
}

TEST(ChecksOneAtATime, ExitCheckBesideLiveChecksIsExact) {
  const std::string dir = ScratchDir("exit");
  constexpr int kRuns = 20;
  int exact = 0;
  for (int run = 0; run < kRuns; ++run) {
    ProcessResult r = RunProcess({HC_CHECKS_BESIDE_LIVE, "exit", "150"}, Env(dir), 60);
    ASSERT_FALSE(r.timed_out) << "run " << run << ":\n" << r.err.substr(0, 4000);
    EXPECT_EQ(r.exit_code, 1) << "run " << run << ":\n" << r.err.substr(0, 4000);
    const bool found = r.err.find(kReportLine) != std::string::npos;
    EXPECT_TRUE(found) << "run " << run << ":\n" << r.err.substr(0, 4000);
    ExpectNoCheckerTrouble(r.err);
    exact += found;
  }
  EXPECT_EQ(exact, kRuns);
}

}  // namespace
}  // namespace heapkit::test
