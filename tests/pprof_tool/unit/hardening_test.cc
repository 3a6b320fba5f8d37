// The small pieces pprof-tool's hardening rests on: which requests the web UI answers
// (request_guard.h), what a regex option matches (name_pattern.h), which source files are read
// (source_files.h). End to end: tests/pprof_tool/hardening/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "pprof-tool/report/name_pattern.h"
#include "pprof-tool/report/source_files.h"
#include "profiler/http/request_guard.h"

namespace heapkit::pprof {
namespace {

using web::RequestGuard;

RequestGuard Guard(const std::string& host, int port) { return RequestGuard(host, port, "hint"); }

TEST(RequestGuard, LoopbackServerAnswersOnlyItsOwnNames) {
  const RequestGuard g = Guard("127.0.0.1", 8080);
  for (const char* host : {"127.0.0.1:8080", "localhost:8080", "LocalHost:8080", "[::1]:8080"}) {
    EXPECT_EQ(g.Refusal(host, "", ""), "") << host;
  }
  for (const char* host : {"evil.example:8080", "127.0.0.1:8081", "127.0.0.1", "localhost", "",
                           "localhost:8080.evil.example", "127.0.0.1:80800"}) {
    EXPECT_NE(g.Refusal(host, "", ""), "") << host;
  }
  EXPECT_EQ(Guard("127.0.0.1", 80).Refusal("localhost", "", ""), "");  // port 80: optional
}

TEST(RequestGuard, CrossSiteRequestsAreRefusedWhateverTheAddress) {
  for (const RequestGuard& g : {Guard("127.0.0.1", 9000), Guard("0.0.0.0", 9000)}) {
    const std::string host = "127.0.0.1:9000";
    EXPECT_EQ(g.Refusal(host, "", "same-origin"), "");
    EXPECT_EQ(g.Refusal(host, "", "none"), "");
    EXPECT_EQ(g.Refusal(host, "http://127.0.0.1:9000", "same-origin"), "");
    EXPECT_NE(g.Refusal(host, "", "cross-site"), "");
    EXPECT_NE(g.Refusal(host, "", "same-site"), "");
    EXPECT_NE(g.Refusal(host, "http://evil.example", ""), "");
    EXPECT_NE(g.Refusal(host, "null", ""), "");
  }
  // Bound elsewhere on purpose: any Host, but Origin must be that Host.
  const RequestGuard lan = Guard("192.168.1.5", 9000);
  EXPECT_EQ(lan.Refusal("profiles.lan:9000", "", ""), "");
  EXPECT_EQ(lan.Refusal("profiles.lan:9000", "http://profiles.lan:9000", ""), "");
  EXPECT_NE(lan.Refusal("profiles.lan:9000", "http://other.lan:9000", ""), "");
}

// The runtime's endpoint: a side effect (a leak check) is refused to a page of another origin
// even from a browser that sends no Fetch Metadata, by its Referer; a Unix socket answers any
// Host but keeps the cross-site rule.
TEST(RequestGuard, SideEffectsRefuseForeignReferers) {
  const RequestGuard g = Guard("127.0.0.1", 6060);
  std::string line;
  const web::RequestHeaders foreign{"127.0.0.1:6060", "", "", "http://evil.example/page"};
  EXPECT_EQ(g.Judge(foreign, false, &line), RequestGuard::Verdict::kAnswer);
  EXPECT_EQ(g.Judge(foreign, true, &line), RequestGuard::Verdict::kCrossSite);
  EXPECT_NE(line.find("Referer"), std::string::npos) << line;
  const web::RequestHeaders ours{"127.0.0.1:6060", "", "", "http://localhost:6060/debug/pprof/"};
  EXPECT_EQ(g.Judge(ours, true, &line), RequestGuard::Verdict::kAnswer);
  const web::RequestHeaders port{"127.0.0.1:6060", "", "", "http://127.0.0.1:6061/"};
  EXPECT_EQ(g.Judge(port, true, &line), RequestGuard::Verdict::kCrossSite);
  const web::RequestHeaders rebound{"rebind.test:6060", "", "", ""};
  EXPECT_EQ(g.Judge(rebound, false, &line), RequestGuard::Verdict::kWrongHost);
  const RequestGuard unix_socket = RequestGuard::AnyHost("hint");
  EXPECT_EQ(unix_socket.Judge({"localhost", "", "", ""}, true, &line),
            RequestGuard::Verdict::kAnswer);
  EXPECT_EQ(unix_socket.Judge({"localhost", "", "cross-site", ""}, false, &line),
            RequestGuard::Verdict::kCrossSite);
}

TEST(RequestGuard, RefusalIsOneLineWithoutControlBytes) {
  const std::string r = Guard("127.0.0.1", 1).Refusal("a\nb\x1b[31m", "", "");
  EXPECT_EQ(r.find('\n'), std::string::npos);
  EXPECT_EQ(r.find('\x1b'), std::string::npos);
}

TEST(NamePattern, GoSyntaxAndLinearTime) {
  NamePattern p;
  std::string error;
  ASSERT_TRUE(p.Compile("(?i)^APP::", "focus", &error));
  EXPECT_TRUE(p.Search("app::Run"));
  EXPECT_FALSE(p.Search("std::app::Run"));
  ASSERT_TRUE(p.Compile("(.+)+#", "focus", &error));
  EXPECT_FALSE(p.Search(std::string(100000, 'a')));  // std::regex: exponential, or SIGSEGV
  EXPECT_FALSE(p.Compile("a(?=b)", "ignore", &error));
  EXPECT_EQ(error.find("--ignore=a(?=b): invalid regular expression ("), 0u) << error;
  EXPECT_TRUE(p.Compile("", "hide", &error));
  EXPECT_FALSE(p.active());
  EXPECT_FALSE(p.Search("anything"));
}

TEST(NamePattern, ExactPatternMatchesTheNameOnly) {
  NamePattern p;
  std::string error;
  ASSERT_TRUE(p.Compile(ExactNamePattern("std::vector<int>::push_back(int&&) [clone .isra.0]"),
                        "list", &error));
  EXPECT_TRUE(p.Search("std::vector<int>::push_back(int&&) [clone .isra.0]"));
  EXPECT_FALSE(p.Search("xstd::vector<int>::push_back(int&&) [clone .isra.0]"));
  const std::string huge(kMaxMatchedNameBytes + 10, 'x');
  ASSERT_TRUE(p.Compile(ExactNamePattern(huge), "list", &error)) << error;
  EXPECT_TRUE(p.Search(huge));
}

TEST(SourceFiles, ProfileNamedFilesOnlyUnderSourcePath) {
  char dir_template[] = "/tmp/source_files_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  std::ofstream(dir + "/a.cc") << "line one\nline two\n";
  SourceAccess access;
  access.source_path = {dir};
  access.trim_path = {"/build/proj"};
  access.profile_named = {"/etc/passwd", dir + "/a.cc", "/build/proj/a.cc", "../../etc/passwd"};
  std::vector<std::string> lines;
  std::string why;
  EXPECT_FALSE(ReadSourceFile(access, "/etc/passwd", &lines, &why));
  EXPECT_EQ(why, "the profile names it, outside --source_path");
  EXPECT_FALSE(ReadSourceFile(access, "../../etc/passwd", &lines, &why));
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(ReadSourceFile(access, dir + "/a.cc", &lines, &why)) << why;
  EXPECT_EQ(lines, (std::vector<std::string>{"line one", "line two"}));
  lines.clear();
  EXPECT_TRUE(ReadSourceFile(access, "/build/proj/a.cc", &lines, &why)) << why;
  // A name only a local binary's debug info gives is read where it is, outside --source_path.
  access.source_path = {"/nonexistent"};
  access.profile_named.clear();
  lines.clear();
  EXPECT_TRUE(ReadSourceFile(access, dir + "/a.cc", &lines, &why)) << why;
  std::remove((dir + "/a.cc").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace heapkit::pprof
