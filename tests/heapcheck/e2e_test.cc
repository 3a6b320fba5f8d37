// End-to-end leak-check scenarios: scenarios/scenarios.cc run under HEAPCHECK with
// LD_PRELOAD=libheapkit.so (built -O0 with frame pointers and -O2 without) and linked
// statically with libheapkit.a. Every expectation is exact: bytes, objects and exit status.
// The *Snapshot flavours run the same scenarios with HEAP_CHECK_FORK_SNAPSHOT=all, so that every
// check, the exit check included, floods in a forked snapshot (heapcheck/snapshot_fork.h): the
// results must be the same, and the verbose line must say the snapshot was taken.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "run_process.h"

namespace heapkit::test {
namespace {

enum class Flavor { kPreloadO0, kPreloadO2, kStaticO2, kPreloadO2Snapshot, kStaticO2Snapshot };

bool IsSnapshot(Flavor f) {
  return f == Flavor::kPreloadO2Snapshot || f == Flavor::kStaticO2Snapshot;
}
bool IsStatic(Flavor f) { return f == Flavor::kStaticO2 || f == Flavor::kStaticO2Snapshot; }

struct Scenario {
  std::string name;              // test name
  std::string arg;               // argv[1] of the scenario program
  std::vector<std::string> env;  // besides HEAPCHECK (default normal)
  int exit_code;
  long long bytes;  // -1: expect "No leaks found"
  long long objects;
  std::vector<std::string> stderr_has;
  std::vector<std::string> stdout_has;
  bool static_too = false;  // also run the -lheapkit static flavour
};

std::string SuppressionsFile() {
  // One fixed file, rewritten atomically by every test process (same content each time).
  static std::string path = [] {
    std::string p = "/tmp/heapcheck_e2e_suppressions.supp";
    std::string tmp = p + "." + std::to_string(getpid());
    {
      std::ofstream f(tmp);
      f << "# leak-check suppressions for the e2e test\n\nleak:LeakToSuppress\n"
           "leak:^NoSuchFunction$\n";
    }
    std::rename(tmp.c_str(), p.c_str());
    return p;
  }();
  return path;
}

// One scenario per row (clang-format puts every field of a row on its own line).
// clang-format off
std::vector<Scenario> Scenarios() {
  const std::string normal = "HEAPCHECK=normal";
  return {
      {"LostPointer", "lost_pointer", {normal}, 1, 33, 1,
       {"Leak of 33 bytes in 1 objects allocated from: (direct leak)", "LostPointer"}, {}, true},
      {"ZeroByteLeaks", "zero_byte", {normal}, 1, 0, 2, {}, {}, true},
      {"UnreachableCycle", "cycles", {normal}, 1, 144, 3, {"(direct leak)", "(indirect leak)"}, {},
       true},
      {"ReachableFromGlobalsAndFunctionStatics", "globals", {normal}, 0, -1, 0, {}, {}, true},
      {"ReachableFromMainThreadTls", "tls", {normal}, 0, -1, 0, {}, {}, true},
      {"ReachableFromLiveThreadStack", "thread_stack", {normal}, 0, -1, 0, {}, {}, true},
      {"ReachableFromLiveThreadRegister", "thread_register", {normal}, 0, -1, 0, {}, {}},
      {"RegisterControlLeaks", "thread_register_lost", {normal}, 1, 40, 1, {}, {}},
      {"InteriorPointerBeyondMaxOffset", "interior", {normal, "HEAP_CHECK_MAX_POINTER_OFFSET=1024"},
       1, 4096, 1, {}, {}},
      {"InteriorPointerAnyOffset", "interior", {normal, "HEAP_CHECK_MAX_POINTER_OFFSET=-1"}, 0, -1,
       0, {}, {}},
      // The default is LeakSanitizer's rule (README.md, "Interior pointers").
      {"InteriorPointerDefaultIsAnyOffset", "interior", {normal}, 0, -1, 0, {}, {}},
      {"IndirectChain", "indirect_chain", {normal}, 1, 480, 10,
       {"Leak of 48 bytes in 1 objects allocated from: (direct leak)",
        "Leak of 432 bytes in 9 objects allocated from: (indirect leak)"},
       {}, true},
      {"XorHiddenPointer", "xor_hidden", {normal}, 1, 64, 1, {}, {}},
      {"ReallocMemalignCalloc", "realloc_memalign_calloc", {normal}, 1, 1833, 5, {}, {}, true},
      {"HugeLeak", "huge", {normal}, 1, 67108864, 1, {}, {}},
      {"DlopenedLibraryLeak", "dlopen", {normal}, 1, 123, 1, {"PluginLeak", "plugin.cc:"}, {}},
      {"ExitedThreadsLeak", "exited_threads", {normal}, 1, 800, 50, {"ThreadLeaksAndExits"}, {},
       true},
      {"StlContainersInGlobals", "stl_globals", {normal}, 0, -1, 0, {}, {}, true},
      {"HundredThousandSmallLeaks", "many_small", {normal}, 1, 800000, 100000,
       {}, {}},
      {"MillionObjectReachableGraph", "million_graph", {normal}, 0, -1, 0, {}, {}},
      {"NamedCheckers", "named", {normal}, 1, 11, 1,
       {"Leak check named detected leaks of 60 bytes in 3 objects",
        "No leaks found for check \"clean\""},
       {"named: NoLeaks=0 BytesLeaked=60 ObjectsLeaked=3 IsActive=1", "clean: NoLeaks=1"}},
      {"LocalModeOnlyNamedChecks", "named", {"HEAPCHECK=local"}, 0, -2, 0,
       {"Leak check named detected leaks of 60 bytes in 3 objects"}, {}},
      {"Disabler", "disabler", {normal}, 1, 12, 1, {}, {}},
      {"IgnoreObject", "ignore_object", {normal}, 1, 17, 1, {}, {}},
      {"Suppressions", "suppressions", {normal, "HEAPCHECK_SUPPRESSIONS=" + SuppressionsFile()}, 1,
       24, 1, {"RealLeak", "suppressed by"}, {}},
      {"NormalModeBeforeDestructors", "strict", {normal}, 0, -1, 0, {}, {}},
      {"StrictModeAfterDestructors", "strict", {"HEAPCHECK=strict"}, 1, 32, 1, {}, {}, true},
      {"UnknownModeNoCheck", "lost_pointer", {"HEAPCHECK=bogus"}, 0, -2, 0,
       {"heapkit: HEAPCHECK='bogus' is not a known mode"}, {}},
      {"ErrorExitCode", "lost_pointer", {normal, "HEAP_CHECK_ERROR_EXIT_CODE=7"}, 7, 33, 1, {}, {}},
      {"BufferedStdoutFlushed", "buffered_stdout", {normal}, 1, 9, 1, {},
       {"buffered-stdout-survives"}},
      {"NoLeaks", "no_leaks", {normal}, 0, -1, 0, {}, {}, true},
      {"StaleSlotsInDeadFramesAreNotRoots", "stale_stack", {normal}, 1, 77, 1, {}, {}, true},
      {"ThreadsBusyInAllocatorAtExit", "busy_threads", {normal}, 1, 21, 1, {}, {}, true},
      {"DraconianReportsGlobalsToo", "draconian", {"HEAPCHECK=draconian"}, 1, 45, 1, {}, {}},
      {"NormalKeepsGlobals", "draconian", {normal}, 0, -1, 0, {}, {}},
      {"ConstructorLeakNormal", "lost_pointer", {normal, "HC_CTOR_LEAK=1"}, 1, 46, 2, {}, {}},
      {"ConstructorLeakIgnoredByMinimal", "lost_pointer", {"HEAPCHECK=minimal", "HC_CTOR_LEAK=1"},
       1, 33, 1, {}, {}},
      {"BadEnvValueUsesDefault", "interior", {normal, "HEAP_CHECK_MAX_POINTER_OFFSET=bogus"}, 0,
       -1, 0, {"heapkit: ignoring HEAP_CHECK_MAX_POINTER_OFFSET='bogus'"}, {}},
      {"MissingSuppressionsFile", "lost_pointer",
       {normal, "HEAPCHECK_SUPPRESSIONS=/nonexistent/heapcheck.supp"}, 1, 33, 1,
       {"heapkit: cannot read HEAPCHECK_SUPPRESSIONS file '/nonexistent/heapcheck.supp'"}, {}},
      {"IdentifyLeaks", "lost_pointer", {normal, "HEAP_CHECK_IDENTIFY_LEAKS=1"}, 1, 33, 1,
       {"\tleaked object 0x", "(33 bytes)"}, {}},
      {"ProtNoneInsideHeapBlocks", "prot_none", {normal, "PERFTOOLS_VERBOSE=1"}, 1, 12288, 1,
       {"unreadable ranges inside heap objects not scanned"}, {}, true},
      {"SuppressedLeaksOwnTheirChildren", "suppressed_owners",
       {normal, "HEAPCHECK_SUPPRESSIONS=" + SuppressionsFile()}, 1, 48, 2,
       {"(184 bytes in 4 more objects suppressed by", "RealLeakHolding", "SharedChild"}, {}, true},
      // The thread blocks every signal: stopped with ptrace, its stack scanned.
      {"SignalBlockingThreadIsStoppedWithPtrace", "unstoppable_thread", {normal}, 0, -1, 0, {},
       {}, true},
      {"SignalBlockingThreadIsStoppedWithPtraceStrict", "unstoppable_thread",
       {"HEAPCHECK=strict"}, 0, -1, 0, {}, {}},
      // Without ptrace it cannot be stopped, and the report says what that means.
      {"UnstoppableThreadWarnsOfFalseLeaks", "unstoppable_thread",
       {normal, "HEAP_CHECK_STOP_TIMEOUT_MS=300", "HEAP_CHECK_PTRACE=false"}, 1, 64, 1,
       {"WARNING: 1 threads could not be stopped (tid ", "this report may contain false leaks"},
       {}},
      {"UnstoppableThreadFailsStrict", "unstoppable_thread",
       {"HEAPCHECK=strict", "HEAP_CHECK_STOP_TIMEOUT_MS=300", "HEAP_CHECK_PTRACE=false"}, 1, -2,
       0,
       {"Leak check _main_ failed: 1 threads could not be stopped and were not scanned; "
        "HEAPCHECK=strict gives no result it cannot vouch for",
        "Exiting with error code (instead of crashing)"},
       {}},
      {"ExitFromThreadWithSmallStack", "small_stack_exit", {normal}, 1, 66, 1, {}, {}, true},
      {"ThreadOnSwapcontextStack", "swapcontext", {normal}, 1, 33, 1, {}, {}, true},
      {"ThreadOnMallocedSigaltstack", "sigaltstack", {normal}, 1, 33, 1, {}, {}, true},
      {"ThreadOnMallocedPthreadStack", "heap_pthread_stack", {normal}, 1, 33, 1, {}, {}, true},
      {"CancelGlobalCheck", "cancel_global_check", {normal}, 0, -2, 0,
       {"Canceling the automatic at-exit whole-program memory leak check"}, {}, true},
      {"MaxLeaksLimitsGroups", "cycles", {normal, "HEAP_CHECK_MAX_LEAKS=1"}, 1, 144, 3,
       {"The 1 largest leaks:"}, {}},
  };
}
// clang-format on

struct Param {
  Scenario scenario;
  Flavor flavor;
};

void PrintTo(const Param& p, std::ostream* os) { *os << p.scenario.name; }

class HeapcheckE2E : public ::testing::TestWithParam<Param> {};

TEST_P(HeapcheckE2E, Scenario) {
  const Scenario& s = GetParam().scenario;
  const Flavor flavor = GetParam().flavor;
  std::string program = flavor == Flavor::kPreloadO0 ? HC_SCENARIOS_O0
                        : IsStatic(flavor)           ? HC_SCENARIOS_STATIC
                                                     : HC_SCENARIOS_O2;
  std::vector<std::string> env = s.env;
  if (!IsStatic(flavor)) env.push_back(std::string("LD_PRELOAD=") + HC_LIBHEAPKIT);
  if (IsSnapshot(flavor)) {
    env.push_back("HEAP_CHECK_FORK_SNAPSHOT=all");
    env.push_back("PERFTOOLS_VERBOSE=1");
  }
  env.push_back("HEAP_CHECK_DUMP_DIRECTORY=/tmp");
  env.push_back("HEAP_CHECK_REPORT_CLEAN=true");  // stderr is a pipe: the clean line on demand
  std::vector<std::string> argv = {program, s.arg};
  if (s.arg == "dlopen") argv.push_back(HC_PLUGIN);
  ProcessResult r = RunProcess(argv, env, 60);
  SCOPED_TRACE("stderr:\n" + r.err + "\nstdout:\n" + r.out);
  // Every .heap file this run wrote (named checks write their own) is removed at the end.
  struct Cleanup {
    std::vector<std::string> paths;
    ~Cleanup() {
      for (const auto& p : paths) std::remove(p.c_str());
    }
  } cleanup;
  static const std::regex kAnyHint("pprof-tool [^ ]+ \"([^\"]+)\" --inuse_objects");
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), kAnyHint);
       it != std::sregex_iterator(); ++it) {
    cleanup.paths.push_back((*it)[1].str());
  }
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, s.exit_code);
  std::smatch m;
  static const std::regex kLeaks(
      "Leak check _main_ detected leaks of ([0-9]+) bytes in ([0-9]+) objects");
  if (s.bytes >= 0) {
    ASSERT_TRUE(std::regex_search(r.err, m, kLeaks));
    EXPECT_EQ(std::stoll(m[1]), s.bytes);
    EXPECT_EQ(std::stoll(m[2]), s.objects);
    EXPECT_NE(r.err.find("\nExiting with error code (instead of crashing) because of "
                         "whole-program memory leaks\n"),
              std::string::npos);
    // The hint names the .heap file, which exists and is a legacy heap profile.
    static const std::regex kHint(
        "pprof-tool [^ ]+ \"([^\"]+)\" --inuse_objects --lines --heapcheck");
    ASSERT_TRUE(std::regex_search(r.err, m, kHint));
    std::ifstream heap(m[1].str());
    std::string first;
    std::getline(heap, first);
    EXPECT_EQ(first.rfind("heap profile:", 0), 0u) << m[1].str();
    std::string all((std::istreambuf_iterator<char>(heap)), std::istreambuf_iterator<char>());
    EXPECT_NE(all.find("MAPPED_LIBRARIES:"), std::string::npos);
    // gperftools' last hint suggests HEAP_CHECK_MAX_POINTER_OFFSET=-1 only under a bounded
    // rule: any interior pointer is the default.
    bool bounded = false;
    for (const auto& e : s.env) {
      static const std::regex kBounded("HEAP_CHECK_MAX_POINTER_OFFSET=[0-9]+");
      bounded = bounded || std::regex_match(e, kBounded);
    }
    const std::string hint = "try rerunning this program with HEAP_CHECK_TEST_POINTER_ALIGNMENT=1";
    const size_t at = r.err.find(hint);
    ASSERT_NE(at, std::string::npos);
    const std::string offset_hint = " and/or with HEAP_CHECK_MAX_POINTER_OFFSET=-1\n";
    EXPECT_EQ(r.err.compare(at + hint.size(), offset_hint.size(), offset_hint) == 0, bounded);
    if (!bounded) {
      EXPECT_EQ(r.err[at + hint.size()], '\n');
    }
  } else if (s.bytes == -1) {
    EXPECT_NE(r.err.find("No leaks found for check \"_main_\""), std::string::npos);
    EXPECT_FALSE(std::regex_search(r.err, m, kLeaks));
  } else {  // -2: no whole-program check at all
    EXPECT_EQ(r.err.find("check \"_main_\""), std::string::npos);
    EXPECT_FALSE(std::regex_search(r.err, m, kLeaks));
  }
  for (const auto& want : s.stderr_has) EXPECT_NE(r.err.find(want), std::string::npos) << want;
  for (const auto& want : s.stdout_has) EXPECT_NE(r.out.find(want), std::string::npos) << want;
  // Every check that ran took the snapshot path (not the stop-the-world fallback).
  if (IsSnapshot(flavor) && s.bytes != -2) {
    EXPECT_NE(r.err.find("(flood in a forked snapshot, the fork "), std::string::npos);
    EXPECT_EQ(r.err.find("(threads stopped throughout)"), std::string::npos);
    EXPECT_EQ(r.err.find("leak check: cannot fork a snapshot"), std::string::npos);
    EXPECT_EQ(r.err.find("snapshot process"), std::string::npos);
  }
}

// Forked children are checked when they leave through exit(): a report headed with the child's
// pid, the child's own .heap file and exit status; HEAP_CHECK_CHILDREN=false and _exit skip it.
struct ForkRun {
  ProcessResult r;
  std::string child_pid;
  int child_status = -1;
};
ForkRun RunForkScenario(const std::string& arg, std::vector<std::string> env) {
  env.push_back("HEAPCHECK=normal");
  env.push_back(std::string("LD_PRELOAD=") + HC_LIBHEAPKIT);
  env.push_back("HEAP_CHECK_DUMP_DIRECTORY=/tmp");
  env.push_back("HEAP_CHECK_REPORT_CLEAN=true");
  ForkRun f{RunProcess({HC_SCENARIOS_O2, arg}, env, 60), "", -1};
  std::smatch m;
  static const std::regex kChild("child ([0-9]+) exited with (-?[0-9]+)");
  if (std::regex_search(f.r.out, m, kChild)) {
    f.child_pid = m[1];
    f.child_status = std::stoi(m[2]);
  }
  return f;
}

TEST(HeapcheckChildren, ForkedChildIsCheckedAtExit) {
  ForkRun f = RunForkScenario("fork_child", {});
  SCOPED_TRACE("stderr:\n" + f.r.err + "\nstdout:\n" + f.r.out);
  ASSERT_FALSE(f.child_pid.empty());
  EXPECT_EQ(f.r.exit_code, 0);  // the parent leaked nothing
  EXPECT_EQ(f.child_status, 1);
  const std::string head = "Leak check of forked child process " + f.child_pid + " (parent ";
  const size_t at = f.r.err.find(head);
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(f.r.err.find("Leak check _main_ detected leaks of 55 bytes in 1 objects", at),
            std::string::npos);
  EXPECT_NE(f.r.err.find("No leaks found for check \"_main_\""), std::string::npos);
  const std::string heap = "/tmp/heapcheck_scenarios_o2." + f.child_pid + "._main_-end.heap";
  EXPECT_NE(f.r.err.find(heap), std::string::npos);
  EXPECT_EQ(std::remove(heap.c_str()), 0) << heap;
}

TEST(HeapcheckChildren, OptOutAndUnderscoreExitSkipTheCheck) {
  for (const auto& [arg, env] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"fork_child", {"HEAP_CHECK_CHILDREN=false"}}, {"fork_child_underscore_exit", {}}}) {
    ForkRun f = RunForkScenario(arg, env);
    SCOPED_TRACE(arg + " stderr:\n" + f.r.err + "\nstdout:\n" + f.r.out);
    EXPECT_EQ(f.r.exit_code, 0);
    EXPECT_EQ(f.child_status, 0);
    EXPECT_EQ(f.r.err.find("forked child"), std::string::npos);
    EXPECT_EQ(f.r.err.find("detected leaks"), std::string::npos);
  }
}

// `ulimit -s 128`: the check and the report run on the checker's own stack, not the 128 KiB
// main stack (it used to die with SIGSEGV after the first report line).
TEST(HeapcheckSmallStack, MainStackOf128KiB) {
  const std::string cmd = std::string("ulimit -s 128 && exec ") + HC_SCENARIOS_O2 + " stale_stack";
  ProcessResult r = RunProcess({"/bin/sh", "-c", cmd},
                               {"HEAPCHECK=normal", std::string("LD_PRELOAD=") + HC_LIBHEAPKIT,
                                "HEAP_CHECK_DUMP_DIRECTORY=/tmp"},
                               60);
  SCOPED_TRACE("stderr:\n" + r.err);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 77 bytes in 1 objects"),
            std::string::npos);
  EXPECT_NE(r.err.find("Exiting with error code (instead of crashing)"), std::string::npos);
  std::smatch m;
  static const std::regex kHint("pprof-tool [^ ]+ \"([^\"]+)\" --inuse_objects");
  if (std::regex_search(r.err, m, kHint)) std::remove(m[1].str().c_str());
}

std::vector<Param> AllParams() {
  std::vector<Param> out;
  for (const auto& s : Scenarios()) {
    out.push_back({s, Flavor::kPreloadO0});
    out.push_back({s, Flavor::kPreloadO2});
    out.push_back({s, Flavor::kPreloadO2Snapshot});
    if (s.static_too) out.push_back({s, Flavor::kStaticO2});
    if (s.static_too) out.push_back({s, Flavor::kStaticO2Snapshot});
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  const Flavor flavor = info.param.flavor;
  const char* f = flavor == Flavor::kPreloadO0           ? "PreloadO0"
                  : flavor == Flavor::kPreloadO2         ? "PreloadO2"
                  : flavor == Flavor::kStaticO2          ? "StaticO2"
                  : flavor == Flavor::kPreloadO2Snapshot ? "PreloadO2Snapshot"
                                                         : "StaticO2Snapshot";
  return info.param.scenario.name + "_" + f;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, HeapcheckE2E, ::testing::ValuesIn(AllParams()), ParamName);

}  // namespace
}  // namespace heapkit::test
