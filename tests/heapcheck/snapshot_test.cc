// Snapshot checks (heapcheck/snapshot_fork.h) of a running program, snapshot/snapshot_service.cc:
// the API's and the live endpoint's checks flood in a forked copy while 8 threads allocate and
// free, and find exactly the known leaks; a fork refused (seccomp, RLIMIT_NPROC) or a copy that
// dies gives one line and the same result from a check with the threads stopped.
#include <gtest/gtest.h>

#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "run_process.h"

namespace heapkit::test {
namespace {

struct Summary {
  int checks = -1, mismatches = -1;
};

Summary ParseSummary(const std::string& out) {
  static const std::regex re("summary: ([0-9]+) checks, ([0-9]+) mismatches");
  std::smatch m;
  Summary s;
  if (std::regex_search(out, m, re)) s = {std::stoi(m[1]), std::stoi(m[2])};
  return s;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The verbose lines of the checks that stopped the threads throughout.
size_t CountStopped(const std::string& text) {
  static const std::regex re("the check took [0-9]+ us \\(threads stopped throughout\\)");
  return static_cast<size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

ProcessResult RunService(const std::string& mode, const std::string& amount,
                         std::vector<std::string> env = {}) {
  env.push_back("HEAPCHECK=normal");
  env.push_back("PERFTOOLS_VERBOSE=1");  // each check's line says how it held the heap still
  env.push_back("HEAP_CHECK_MAX_LEAKS=1");
  env.push_back("HEAP_CHECK_DUMP_DIRECTORY=/tmp");
  // 8 threads that never pause, on a loaded CI machine: time for each to take the signal.
  env.push_back("HEAP_CHECK_STOP_TIMEOUT_MS=20000");
  ProcessResult r = RunProcess({HC_SNAPSHOT_SERVICE, mode, amount}, env, 120);
  // Every worker was stopped and scanned (a thread left running could explain a difference).
  EXPECT_EQ(r.err.find("could not be stopped"), std::string::npos) << r.err.substr(0, 4000);
  return r;
}

// Removes the .heap files the API checks wrote (their names are in the reports).
void RemoveHeapFiles(const std::string& err) {
  static const std::regex kHint("pprof-tool [^ ]+ \"([^\"]+)\" --inuse_objects");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), kHint); it != std::sregex_iterator();
       ++it)
    std::remove((*it)[1].str().c_str());
}

const char kSnapshotLine[] = "(flood in a forked snapshot, the fork ";
const char kRefusedLine[] = "heapkit: leak check: cannot fork a snapshot of the process: ";

// ~20 s of API and live checks against 8 busy threads: every one exact, every API check in a
// snapshot (the live ones share its path and settings), and the exit check with the threads
// stopped throughout (not a running program any more).
TEST(SnapshotCheck, SoakOfLiveAndApiChecksFindsExactlyTheKnownLeaks) {
  const ProcessResult r = RunService("soak", "20");
  RemoveHeapFiles(r.err);
  SCOPED_TRACE("stdout:\n" + r.out);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 4000);
  const Summary s = ParseSummary(r.out);
  EXPECT_GE(s.checks, 10);
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_NE(r.out.find("truth: leaked 213760 bytes in 70 objects"), std::string::npos);
  const size_t api_checks = Count(r.out, " api ");
  EXPECT_GE(Count(r.out, " live "), 1u);
  EXPECT_EQ(Count(r.err, kSnapshotLine), api_checks) << r.err.substr(0, 4000);
  EXPECT_EQ(Count(r.err, "paused the program for "), api_checks);
  EXPECT_EQ(CountStopped(r.err), 1u);  // the exit check
  EXPECT_EQ(Count(r.err, "snapshot process"), 0u);
  EXPECT_EQ(Count(r.err, kRefusedLine), 0u);
}

// HEAP_CHECK_FORK_SNAPSHOT=false: the same checks with the threads stopped throughout.
TEST(SnapshotCheck, SettingTurnsSnapshotsOff) {
  const ProcessResult r = RunService("soak", "0.5", {"HEAP_CHECK_FORK_SNAPSHOT=false"});
  RemoveHeapFiles(r.err);
  SCOPED_TRACE("stdout:\n" + r.out);
  EXPECT_EQ(r.exit_code, 0);
  const Summary s = ParseSummary(r.out);
  EXPECT_GE(s.checks, 1);
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(Count(r.err, kSnapshotLine), 0u) << r.err;
  EXPECT_EQ(CountStopped(r.err), Count(r.out, " api ") + 1) << r.err;
}

// A refused fork: one line for the process (not per check), every check exact with the threads
// stopped throughout.
void ExpectRefusedOnce(const ProcessResult& r, const std::string& cause) {
  SCOPED_TRACE("stdout:\n" + r.out + "\nstderr:\n" + r.err.substr(0, 6000));
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  const Summary s = ParseSummary(r.out);
  EXPECT_EQ(s.checks, 4);
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(Count(r.err, kRefusedLine), 1u);
  EXPECT_NE(r.err.find(kRefusedLine + cause), std::string::npos);
  EXPECT_EQ(Count(r.err, kSnapshotLine), 0u);
  EXPECT_EQ(CountStopped(r.err), Count(r.out, " api ") + 1);  // the API checks and the exit check
}

TEST(SnapshotCheck, ForkRefusedBySeccompFallsBackOnce) {
  const ProcessResult r = RunService("seccomp", "4");
  RemoveHeapFiles(r.err);
  ExpectRefusedOnce(r, "a seccomp filter or security policy refuses it (errno 1)");
}

TEST(SnapshotCheck, ForkRefusedByRlimitNprocFallsBackOnce) {
  const ProcessResult r = RunService("nproc", "4");
  RemoveHeapFiles(r.err);
  ExpectRefusedOnce(r, "the process limit (RLIMIT_NPROC, a pids cgroup or kernel.pid_max)");
}

// The copy is killed (by a seccomp filter, when it names itself): one line per check, and the
// check is done again with the threads stopped; the program goes on, every result exact.
TEST(SnapshotCheck, CopyThatDiesIsReapedAndTheCheckStopsTheThreads) {
  const ProcessResult r = RunService("copy_dies", "4");
  RemoveHeapFiles(r.err);
  SCOPED_TRACE("stdout:\n" + r.out + "\nstderr:\n" + r.err.substr(0, 6000));
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  const Summary s = ParseSummary(r.out);
  EXPECT_EQ(s.checks, 4);
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(Count(r.err,
                  "died by signal 31 before sending its result; checking with the "
                  "threads stopped"),
            4u);
  EXPECT_EQ(Count(r.err, kSnapshotLine), 0u);
  EXPECT_EQ(CountStopped(r.err), Count(r.out, " api ") + 1);
}

}  // namespace
}  // namespace heapkit::test
