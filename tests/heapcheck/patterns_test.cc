// The leak checker in programs that do what real programs do at exit: tear down the TLS
// libraries the report's symbolizer would otherwise load again, close stderr, block every
// signal in a thread, parse a child's stderr, get stopped by SIGTERM, tail-call main. Each
// program in patterns/ reproduces one such pattern; each test runs it under
// LD_PRELOAD=libheapkit.so and checks what a user would see.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_process.h"

namespace heapkit::test {
namespace {

std::string Preload() { return std::string("LD_PRELOAD=") + HC_LIBHEAPKIT; }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A scratch directory of the test's own.
std::string ScratchDir(const std::string& name) {
  std::string dir = "/tmp/heapcheck_patterns_" + name + "_" + std::to_string(getpid());
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

#ifdef HC_TLS_TEARDOWN
// ---- the symbolizer never loads the debuginfod client (libcurl, OpenSSL) into the program ----

class TlsTeardown : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(TlsTeardown, ReportsWithoutLoadingNetworkLibrariesAgain) {
  const auto [mode, arg] = GetParam();
  const std::string dir = ScratchDir("tls");
  // LD_DEBUG=files names every library the process loads; DEBUGINFOD_URLS unset (RunProcess
  // keeps the environment, so drop it explicitly).
  ProcessResult r = RunProcess({"/usr/bin/env", "-u", "DEBUGINFOD_URLS", HC_TLS_TEARDOWN, arg},
                               {Preload(), std::string("HEAPCHECK=") + mode,
                                "HEAP_CHECK_DUMP_DIRECTORY=" + dir, "LD_DEBUG=files"},
                               60);
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("curl_easy_escape"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("libdebuginfod"), std::string::npos) << "debuginfod client loaded";
}

INSTANTIATE_TEST_SUITE_P(Modes, TlsTeardown,
                         ::testing::Combine(::testing::Values("normal", "strict", "draconian"),
                                            ::testing::Values("keep", "cleanup")));

// Asked for debuginfod: the request goes to a helper process (here a stand-in for
// debuginfod-find that logs its arguments), never to a client loaded into the program.
TEST(TlsTeardownDebuginfod, AsksAHelperProcess) {
  const std::string dir = ScratchDir("tls_debuginfod");
  ASSERT_EQ(symlink(HC_FAKE_DEBUGINFOD_FIND, (dir + "/debuginfod-find").c_str()), 0);
  const std::string log = dir + "/requests.log";
  ProcessResult r = RunProcess(
      {"/usr/bin/env", "PATH=" + dir + ":/usr/bin:/bin", HC_TLS_TEARDOWN, "cleanup"},
      {Preload(), "HEAPCHECK=strict", "HEAP_CHECK_DUMP_DIRECTORY=" + dir, "LD_DEBUG=files",
       "DEBUGINFOD_URLS=http://127.0.0.1:9", "FAKE_DEBUGINFOD_LOG=" + log},
      60);
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find("libdebuginfod"), std::string::npos) << "debuginfod client loaded";
  // libcurl has no local debug info: its build-id was asked for.
  const std::string requests = ReadFile(log);
  EXPECT_NE(requests.find("debuginfo "), std::string::npos) << requests;
}
#endif  // HC_TLS_TEARDOWN

// ---- stderr closed at exit (gnulib's close_stdout) ----

std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::string cmd = "ls -1 '" + dir + "'";
  FILE* p = popen(cmd.c_str(), "r");
  char line[4096];
  while (p != nullptr && fgets(line, sizeof line, p) != nullptr) {
    std::string name(line);
    if (!name.empty() && name.back() == '\n') name.pop_back();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(dir + "/" + name);
  }
  if (p != nullptr) pclose(p);
  return out;
}

TEST(ClosedStderr, ReportGoesNextToTheHeapFile) {
  const std::string dir = ScratchDir("closed");
  ProcessResult r = RunProcess(
      {HC_CLOSE_STDERR}, {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir}, 60);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(r.err, "");  // a pipe: no copy is kept (its reader waits for every writer to close)
  const std::vector<std::string> reports = FilesIn(dir, "._main_-end.report");
  ASSERT_EQ(reports.size(), 1u);
  const std::string report = ReadFile(reports[0]);
  EXPECT_NE(report.find("Leak check _main_ detected leaks of 123 bytes in 1 objects"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("Exiting with error code"), std::string::npos) << report;
  EXPECT_EQ(FilesIn(dir, "._main_-end.heap").size(), 1u);
}

// The program closes stderr and opens a log file that takes descriptors 1 and 2: the report
// must not be written into the program's file.
TEST(ClosedStderr, NeverWritesIntoTheFileThatTookDescriptorTwo) {
  const std::string dir = ScratchDir("reopened");
  const std::string log = dir + "/program.log";
  ProcessResult r =
      RunProcess({HC_CLOSE_STDERR, "reopen", log},
                 {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir}, 60);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ReadFile(log), "program log\n");
  ASSERT_EQ(FilesIn(dir, "._main_-end.report").size(), 1u);
}

// Runs command (a shell command line) with the checker preloaded and stderr redirected to the
// file err_path; the report files go to dir.
ProcessResult RunWithStderrInFile(const std::string& command, const std::string& dir,
                                  const std::string& err_path) {
  return RunProcess({"/bin/sh", "-c", command + " 2>'" + err_path + "'"},
                    {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir}, 60);
}

// stderr is a file (`prog 2>err`): the checker keeps a copy of it from start-up, and a program
// that closed descriptor 2 still gets its report there, not in a file nobody is told about.
TEST(ClosedStderr, ReportReachesStderrThatWasAFile) {
  const std::string dir = ScratchDir("closed_file");
  const std::string err = dir + "/err";
  ProcessResult r = RunWithStderrInFile(std::string("exec ") + HC_CLOSE_STDERR, dir, err);
  EXPECT_EQ(r.exit_code, 1);
  const std::string report = ReadFile(err);
  EXPECT_NE(report.find("Leak check _main_ detected leaks of 123 bytes in 1 objects"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("Exiting with error code"), std::string::npos) << report;
  EXPECT_TRUE(FilesIn(dir, ".report").empty());
}

// Another file took descriptor 2: the report goes to stderr as it was, never into that file.
TEST(ClosedStderr, ReopenedDescriptorTwoReportGoesToTheOriginalFile) {
  const std::string dir = ScratchDir("reopened_file");
  const std::string err = dir + "/err", log = dir + "/program.log";
  ProcessResult r = RunWithStderrInFile(
      std::string("exec ") + HC_CLOSE_STDERR + " reopen '" + log + "'", dir, err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ReadFile(log), "program log\n");
  EXPECT_NE(ReadFile(err).find("detected leaks of 123 bytes"), std::string::npos);
}

// tar closes descriptors 1 and 2 at exit (gnulib's close_stdout): `tar czf x.tgz dir 2>err`
// under the checker leaves its report in err.
TEST(ClosedStderr, TarReportReachesItsStderrFile) {
  if (access("/bin/tar", X_OK) != 0) GTEST_SKIP() << "tar not installed";
  const std::string dir = ScratchDir("tar");
  const std::string err = dir + "/err";
  ASSERT_EQ(mkdir((dir + "/in").c_str(), 0700), 0);
  ProcessResult r = RunWithStderrInFile(
      "cd '" + dir + "' && echo data > in/file && exec /bin/tar czf x.tgz in", dir, err);
  const std::string report = ReadFile(err);
  if (r.exit_code == 0) GTEST_SKIP() << "this tar leaks nothing: " << report;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(report.find("Leak check _main_ detected leaks of"), std::string::npos) << report;
  EXPECT_TRUE(FilesIn(dir, ".report").empty());
}

// A program that closes every descriptor closed the checker's copy too, and its number is now
// the program's file: the report goes next to the .heap file, as when no copy was kept, and
// never into the program's file.
TEST(ClosedStderr, ProgramClosingEveryDescriptorGetsTheReportFile) {
  const std::string dir = ScratchDir("close_all");
  const std::string err = dir + "/err", log = dir + "/program.log";
  ProcessResult r = RunWithStderrInFile(
      std::string("exec ") + HC_CLOSE_STDERR + " close-all '" + log + "'", dir, err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(ReadFile(err), "");
  EXPECT_EQ(ReadFile(log), "");
  const std::vector<std::string> reports = FilesIn(dir, "._main_-end.report");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(ReadFile(reports[0]).find("detected leaks of 123 bytes"), std::string::npos);
}

// HEAP_CHECK_REPORT_PATH=<prefix>: the report goes to <prefix>.<pid>, stderr stays the
// program's; a clean check writes its line there too (a person asked for the file).
TEST(ReportPath, ReportGoesToPrefixDotPid) {
  const std::string dir = ScratchDir("report_path");
  ProcessResult r = RunProcess({HC_CLOSE_STDERR},
                               {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir,
                                "HEAP_CHECK_REPORT_PATH=" + dir + "/leaks"},
                               60);
  EXPECT_EQ(r.exit_code, 1);
  const std::vector<std::string> reports = FilesIn(dir, "");
  std::string report;
  for (const std::string& f : reports)
    if (f.find("/leaks.") != std::string::npos) report = ReadFile(f);
  EXPECT_NE(report.find("detected leaks of 123 bytes"), std::string::npos) << report;
  EXPECT_TRUE(FilesIn(dir, ".report").empty());
}

// ---- a clean check prints nothing where a program may parse it ----

TEST(QuietCleanCheck, ParentParsingItsChildSeesNothing) {
  ProcessResult r = RunProcess({HC_PARENT_PARSES_CHILD}, {Preload(), "HEAPCHECK=normal"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child wrote 0 bytes on stderr, exit 0\n");
  EXPECT_EQ(r.err, "");
}

TEST(QuietCleanCheck, VerboseStillSaysNoLeaks) {
  ProcessResult r = RunProcess({HC_PARENT_PARSES_CHILD},
                               {Preload(), "HEAPCHECK=normal", "PERFTOOLS_VERBOSE=1"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("No leaks found for check \"_main_\""), std::string::npos) << r.err;
}

// On a terminal (script(1) gives the program a pseudo-terminal) the line is printed.
TEST(QuietCleanCheck, TerminalStillSaysNoLeaks) {
  if (access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "script(1) not installed";
  // Only the program runs under the checker, not script(1).
  const std::string command =
      "env " + Preload() + " HEAPCHECK=normal " + std::string(HC_PARENT_PARSES_CHILD);
  ProcessResult r = RunProcess({"/usr/bin/script", "-qec", command, "/dev/null"}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No leaks found for check \"_main_\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("child wrote 0 bytes"), std::string::npos) << r.out;
}

// ---- a thread that blocks every signal: stopped with ptrace at once, or named ----

// The worker's tid, from the program's "worker <tid>" line.
std::string WorkerTid(const std::string& out) {
  const size_t at = out.find("worker ");
  if (at == std::string::npos) return "?";
  return out.substr(at + 7, out.find('\n', at) - at - 7);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// mode (HEAPCHECK), where the worker holds the block (blocking_thread's argument).
class BlockingThread : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

// The only pointer to the 96-byte block is on the worker's stack or in one of its registers:
// no leak unless the worker was really stopped and its stack and registers scanned. A stop
// timeout far above the bound: waiting for the thread would exceed it.
TEST_P(BlockingThread, IsStoppedWithPtraceAndItsRootsScanned) {
  const auto [mode, hold] = GetParam();
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r =
      RunProcess({HC_BLOCKING_THREAD, hold},
                 {Preload(), std::string("HEAPCHECK=") + mode, "HEAP_CHECK_STOP_TIMEOUT_MS=30000",
                  "PERFTOOLS_VERBOSE=1", "HEAP_CHECK_DUMP_DIRECTORY=/tmp"},
                 90);
  EXPECT_LT(SecondsSince(start), 15.0) << "waited for a thread that blocks the suspend signal";
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("threads stopped (1 with ptrace)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("detected leaks"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("could not be stopped"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Holds, BlockingThread,
    ::testing::Combine(::testing::Values("normal", "strict"),
                       ::testing::Values("stack", "register", "churn")),
    [](const ::testing::TestParamInfo<std::tuple<const char*, const char*>>& info) {
      return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
    });

// The worker frees its block at about the time of the check, then allocates and frees without
// pause: stopped anywhere (inside malloc and free too), it never makes a leak or a hang.
TEST(BlockingThreadChurn, StoppedAnywhereNeverReportsALeak) {
  for (int run = 0; run < 8; ++run) {
    ProcessResult r =
        RunProcess({HC_BLOCKING_THREAD, "churn"},
                   {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=/tmp"}, 60);
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_EQ(r.exit_code, 0) << "run " << run << ": " << r.err;
  }
}

// Threads that start while the check begins (thread_spawner.c): the check reads the address
// space once the world is stopped, so the stack of a thread started a moment before the stop
// is found and scanned; read before the stop, a new thread's stack was in no mapping and its
// block was reported as a leak (no warning said why) in most runs.
TEST(ThreadsStartingAtExit, TheirStacksAreScanned) {
  for (int run = 0; run < 6; ++run) {
    ProcessResult r = RunProcess(
        {HC_THREAD_SPAWNER},
        {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=/tmp", "PERFTOOLS_VERBOSE=1"},
        60);
    ASSERT_FALSE(r.timed_out);
    ASSERT_NE(r.out.find("exiting while more start"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_EQ(r.exit_code, 0) << "run " << run << ": " << r.err;
    EXPECT_EQ(r.err.find("detected leaks"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("WARNING"), std::string::npos) << r.err;
  }
}

// Where ptrace is refused the thread is left running, named, with what that means; normal
// reports what only it held (a false leak, said so), strict refuses to vouch.
struct Refusal {
  const char* name;
  std::vector<std::string> prefix;  // runs the program (a tracer in front, or none)
  const char* program_arg;          // blocking_thread's second argument
  std::vector<std::string> env;
  const char* why;  // in the line naming the thread
};

// The test's name in a parameter listing (no bytes of the struct).
void PrintTo(const Refusal& refusal, std::ostream* os) { *os << refusal.name; }

// One refusal per row (clang-format puts every field of a row on its own line).
// clang-format off
std::vector<Refusal> Refusals() {
  std::vector<Refusal> out = {
      {"SeccompEperm", {}, "seccomp-eperm", {}, "could not be stopped with ptrace: ptrace was "
       "refused (EPERM: a seccomp filter"},
      {"SeccompKillsTheHelper", {}, "seccomp-kill", {}, "could not be stopped with ptrace: the "
       "ptrace helper died"},
      {"SwitchedOff", {}, "", {"HEAP_CHECK_PTRACE=false"}, "could not be stopped with ptrace: "
       "HEAP_CHECK_PTRACE=false"},
      // Waiting for a vfork child: no ptrace stop until it exits; the helper is killed at the
      // deadline and the kernel lets the thread run again.
      {"HelperTimesOut", {}, "vfork", {"HEAP_CHECK_STOP_TIMEOUT_MS=500"}, "could not be stopped "
       "with ptrace: it did not stop in time under ptrace"},
  };
  if (access("/usr/bin/strace", X_OK) == 0) {
    // Only the program runs under the checker, not strace.
    out.push_back({"UnderStrace", {"/usr/bin/strace", "-f", "-o", "/dev/null", "-E", Preload()},
                   "", {}, "could not be stopped with ptrace: it is traced by process "});
  }
  return out;
}
// clang-format on

class BlockingThreadPtraceRefused
    : public ::testing::TestWithParam<std::tuple<Refusal, const char*>> {};

TEST_P(BlockingThreadPtraceRefused, NamesTheThreadLeftRunning) {
  const auto& [refusal, mode] = GetParam();
  const std::string heapcheck = std::string("HEAPCHECK=") + mode;
  std::vector<std::string> argv = refusal.prefix;
  std::vector<std::string> env = refusal.env;
  env.push_back("HEAP_CHECK_DUMP_DIRECTORY=/tmp");
  bool own_timeout = false;
  for (const std::string& e : refusal.env)
    own_timeout |= e.rfind("HEAP_CHECK_STOP_TIMEOUT_MS=", 0) == 0;
  if (!own_timeout) env.push_back("HEAP_CHECK_STOP_TIMEOUT_MS=30000");
  if (refusal.prefix.empty()) {
    env.push_back(Preload());
    env.push_back(heapcheck);
  } else {  // the tracer runs unchecked; the program gets these from it
    argv.push_back("-E");
    argv.push_back(heapcheck);
  }
  argv.push_back(HC_BLOCKING_THREAD);
  argv.push_back("stack");
  if (refusal.program_arg[0] != '\0') argv.push_back(refusal.program_arg);
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = RunProcess(argv, env, 90);
  EXPECT_LT(SecondsSince(start), 15.0) << "waited for a thread that blocks the suspend signal";
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string tid = WorkerTid(r.out);
  EXPECT_NE(r.err.find("leak check: thread " + tid + " blocks signal "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(refusal.why), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("It kept running during the check"), std::string::npos) << r.err;
  if (std::string(mode) == "normal") {
    EXPECT_NE(r.err.find("WARNING: 1 threads could not be stopped (tid " + tid + ")"),
              std::string::npos)
        << r.err;
    // What it held is reported (its stack was not scanned), and the warning says why.
    EXPECT_NE(r.err.find("detected leaks of 96 bytes in 1 objects"), std::string::npos) << r.err;
  } else {
    EXPECT_NE(r.err.find("1 threads could not be stopped and were not scanned"), std::string::npos)
        << r.err;
  }
}

std::string RefusalName(const ::testing::TestParamInfo<std::tuple<Refusal, const char*>>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Refusals, BlockingThreadPtraceRefused,
                         ::testing::Combine(::testing::ValuesIn(Refusals()),
                                            ::testing::Values("normal", "strict")),
                         RefusalName);

// ---- the follow-up command names a pprof-tool that exists ----

TEST(FollowUpCommand, NamesAnAbsolutePprofToolThatExists) {
  const std::string dir = ScratchDir("follow_up");
  // PATH without any pprof-tool: found beside libheapkit.so (the build tree's layout).
  ProcessResult r = RunProcess({"/usr/bin/env", "PATH=/usr/bin:/bin", HC_CLOSE_STDERR, "keep"},
                               {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir,
                                "HEAP_CHECK_REPORT_PATH=" + dir + "/r"},
                               60);
  EXPECT_EQ(r.exit_code, 1);
  std::string report;
  for (const std::string& f : FilesIn(dir, "")) {
    if (f.find("/r.") != std::string::npos) report = ReadFile(f);
  }
  const size_t at = report.find("shell command:\n\n");
  ASSERT_NE(at, std::string::npos) << report;
  const size_t start = at + 16;
  const std::string tool = report.substr(start, report.find(' ', start) - start);
  ASSERT_FALSE(tool.empty());
  EXPECT_EQ(tool[0], '/') << tool;
  EXPECT_EQ(tool.substr(tool.size() - 11), "/pprof-tool") << tool;
  EXPECT_EQ(access(tool.c_str(), X_OK), 0) << tool;
}

// ---- minimal mode: "after main started" by allocation time ----

TEST(MinimalMode, ReportsLeaksOfATailCallingMain) {
  ProcessResult r = RunProcess(
      {HC_TAIL_CALL_MAIN}, {Preload(), "HEAPCHECK=minimal", "HEAP_CHECK_DUMP_DIRECTORY=/tmp"}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // 77 bytes after main started; the constructor's 13 bytes before it are not reported.
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 77 bytes in 1 objects"),
            std::string::npos)
      << r.err;
}

TEST(MinimalMode, ReportsLeaksDeeperThanTheRecordedStack) {
  ProcessResult r =
      RunProcess({HC_TAIL_CALL_MAIN, "deep"},
                 {Preload(), "HEAPCHECK=minimal", "HEAP_CHECK_DUMP_DIRECTORY=/tmp"}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 200 bytes in 1 objects"),
            std::string::npos)
      << r.err;
}

TEST(MinimalMode, NormalModeStillSeesTheConstructorsLeak) {
  ProcessResult r = RunProcess(
      {HC_TAIL_CALL_MAIN}, {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=/tmp"}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 90 bytes in 2 objects"),
            std::string::npos)
      << r.err;
}

// ---- a server stopped by SIGTERM / SIGINT: checked on request, then dies by the signal ----

class SignalCheck : public ::testing::TestWithParam<const char*> {};

TEST_P(SignalCheck, ChecksThenDiesByTheSignal) {
  const std::string name = GetParam();
  const int sig = name == "INT" ? SIGINT : SIGTERM;
  ProcessResult r = RunProcess({HC_SIGNAL_SERVER, name},
                               {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=/tmp",
                                "HEAP_CHECK_AT_SIGNAL=TERM,INT"},
                               60);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, sig) << r.err;  // as without heapkit
  EXPECT_EQ(r.out, "serving\n");
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 55 bytes in 1 objects"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Exiting with error code"), std::string::npos) << r.err;
}

TEST_P(SignalCheck, WithoutTheVariableDiesUnchecked) {
  const std::string name = GetParam();
  ProcessResult r = RunProcess({HC_SIGNAL_SERVER, name}, {Preload(), "HEAPCHECK=normal"}, 60);
  EXPECT_EQ(r.signal, name == "INT" ? SIGINT : SIGTERM);
  EXPECT_EQ(r.err, "");
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalCheck, ::testing::Values("TERM", "INT"));

// ---- interior pointers: the report says what the other rule would change ----

// Runs the interior-pointer pattern with HEAP_CHECK_MAX_POINTER_OFFSET=offset ("" = default),
// with the threads stopped throughout and, when `snapshot`, in a forked snapshot (the figures
// come back through its pipe).
ProcessResult RunInteriorPointer(const std::string& offset, const std::string& name,
                                 bool snapshot = false) {
  const std::string dir = ScratchDir(name);
  std::vector<std::string> env = {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir,
                                  "HEAP_CHECK_REPORT_CLEAN=true"};
  if (!offset.empty()) env.push_back("HEAP_CHECK_MAX_POINTER_OFFSET=" + offset);
  if (snapshot) env.push_back("HEAP_CHECK_FORK_SNAPSHOT=all");
  return RunProcess({HC_INTERIOR_POINTER}, env, 60);
}

// gperftools' rule: the block held 2048 bytes in is a leak, and the report says that
// LeakSanitizer's rule would keep it (valgrind's "possibly lost").
TEST(InteriorPointers, BoundedRuleSaysWhatAnyInteriorPointerWouldKeep) {
  for (bool snapshot : {false, true}) {
    ProcessResult r = RunInteriorPointer("1024", "interior_bounded", snapshot);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "done\n");
    EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 4219 bytes in 2 objects"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("4096 of these bytes in 1 objects are reached through interior "
                         "pointers beyond 1024 bytes"),
              std::string::npos)
        << "snapshot " << snapshot << "\n"
        << r.err;
  }
}

// LeakSanitizer's rule, the default: the block is live, and the report says that gperftools'
// rule would count it as a leak.
TEST(InteriorPointers, AnyInteriorRuleSaysWhatTheBoundedRuleWouldReport) {
  for (const char* offset : {"-1", ""}) {
    for (bool snapshot : {false, true}) {
      ProcessResult r = RunInteriorPointer(offset, "interior_any", snapshot);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 123 bytes in 1 objects"),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("4096 more bytes in 1 objects would be leaks if interior pointers "
                           "beyond 1024 bytes were ignored"),
                std::string::npos)
          << "offset '" << offset << "' snapshot " << snapshot << "\n"
          << r.err;
    }
  }
}

// A larger bound keeps the block: no line, since the other rule (any) changes nothing reported.
TEST(InteriorPointers, NoLineWhenTheOtherRuleChangesNothing) {
  ProcessResult r = RunInteriorPointer("4096", "interior_none");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("detected leaks of 123 bytes in 1 objects"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("interior pointers beyond"), std::string::npos) << r.err;
}

// ---- _exit: checked with HEAP_CHECK_AT_UNDERSCORE_EXIT, else named in the parent's report ----

ProcessResult RunUnderscoreExit(const std::string& how, bool opt_in, const std::string& dir,
                                const std::vector<std::string>& more = {}) {
  std::vector<std::string> env = {Preload(), "HEAPCHECK=normal", "HEAP_CHECK_DUMP_DIRECTORY=" + dir,
                                  "HEAP_CHECK_ERROR_EXIT_CODE=9"};
  if (opt_in) env.push_back("HEAP_CHECK_AT_UNDERSCORE_EXIT=true");
  env.insert(env.end(), more.begin(), more.end());
  return RunProcess({HC_UNDERSCORE_EXIT, how}, env, 60);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class UnderscoreExit : public ::testing::TestWithParam<const char*> {};

// Opted in: the child that left through _exit is checked (its 77 bytes and the parent's 123 it
// inherited), leaves with the error status, and its buffered stdout is not flushed.
TEST_P(UnderscoreExit, ChildIsCheckedWithTheOptIn) {
  const std::string how = GetParam();
  ProcessResult r = RunUnderscoreExit(how, true, ScratchDir("uexit_" + how));
  EXPECT_EQ(r.exit_code, 9) << r.err;  // the parent's own leak
  EXPECT_EQ(r.out, "child status 9\n") << r.err;
  EXPECT_NE(r.err.find("Leak check of forked child process"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 200 bytes in 2 objects"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 123 bytes in 1 objects"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Not checked:"), std::string::npos) << r.err;
}

// Without it: the child leaves unchecked with its own status, and the parent's report ends with
// a line naming it.
TEST_P(UnderscoreExit, ParentNamesTheUncheckedChild) {
  const std::string how = GetParam();
  ProcessResult r = RunUnderscoreExit(how, false, ScratchDir("uexit_off_" + how));
  EXPECT_EQ(r.exit_code, 9) << r.err;
  const int child_status = how == "signal" ? 5 : 0;
  EXPECT_EQ(r.out, "child status " + std::to_string(child_status) + "\n") << r.err;
  EXPECT_EQ(Count(r.err, "detected leaks of"), 1u) << r.err;
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 123 bytes in 1 objects"),
            std::string::npos)
      << r.err;
  const size_t line = r.err.find(
      "Not checked: 1 processes of this process tree that ended before this check: pid ");
  ASSERT_NE(line, std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" (_exit); HEAP_CHECK_AT_UNDERSCORE_EXIT=true checks those that leave "
                       "through _exit\n",
                       line),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find('\n', line), r.err.size() - 1) << "not the last line:\n" << r.err;
}

INSTANTIATE_TEST_SUITE_P(Ways, UnderscoreExit, ::testing::Values("child", "signal"));

// A forked child that HEAP_CHECK_AT_SIGNAL's signal kills dies unchecked (the watcher thread is
// its parent's): the parent's report names it and the signal.
TEST(UnderscoreExitSignal, ParentNamesTheChildASignalKilled) {
  ProcessResult r =
      RunUnderscoreExit("term", false, ScratchDir("uexit_term"), {"HEAP_CHECK_AT_SIGNAL=TERM"});
  EXPECT_EQ(r.exit_code, 9) << r.err;
  EXPECT_EQ(r.out, "child status " + std::to_string(128 + SIGTERM) + "\n") << r.err;
  EXPECT_EQ(Count(r.err, "detected leaks of"), 1u) << r.err;
  const size_t line = r.err.find(
      "Not checked: 1 processes of this process tree that ended before this check: pid ");
  ASSERT_NE(line, std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" (killed by signal " + std::to_string(SIGTERM) + ")\n", line),
            std::string::npos)
      << r.err;
}

// A vfork child shares its parent's memory: it is never checked, opted in or not, and never
// named (the parent's check is the one that speaks for that memory).
TEST(UnderscoreExitVfork, VforkChildIsNeverChecked) {
  ProcessResult r = RunUnderscoreExit("vfork", true, ScratchDir("uexit_vfork"));
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 9) << r.err;
  EXPECT_EQ(r.out, "child status 7\n") << r.err;
  EXPECT_EQ(Count(r.err, "detected leaks of"), 1u) << r.err;
  EXPECT_NE(r.err.find("Leak check _main_ detected leaks of 123 bytes in 1 objects"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Not checked:"), std::string::npos) << r.err;
}

// With PERFTOOLS_VERBOSE the child says itself that it leaves unchecked.
TEST(UnderscoreExitVerbose, ChildSaysItLeavesUnchecked) {
  ProcessResult r =
      RunUnderscoreExit("child", false, ScratchDir("uexit_verbose"), {"PERFTOOLS_VERBOSE=1"});
  EXPECT_NE(r.err.find("leaves through _exit(0) unchecked (HEAP_CHECK_AT_UNDERSCORE_EXIT=true "
                       "checks it)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace heapkit::test
