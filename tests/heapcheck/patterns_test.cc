// The leak checker in programs that do what real programs do at exit: tear down the TLS
// libraries the report's symbolizer would otherwise load again, close stderr, block every
// signal in a thread, parse a child's stderr, get stopped by SIGTERM, tail-call main. Each
// program in patterns/ reproduces one such pattern; each test runs it under
// LD_PRELOAD=libheapkit.so and checks what a user would see.
#include <gtest/gtest.h>

#include <unistd.h>

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

}  // namespace
}  // namespace heapkit::test
