#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <type_traits>
#include <variant>

#include "pprof-tool/cli/options.h"

namespace heapkit::pprof {
namespace {

int Parse(std::vector<const char*> args, CliOptions* o) {
  args.insert(args.begin(), "pprof-tool");
  return ParseCommandLine(int(args.size()), args.data(), o);
}

TEST(Options, GperftoolsAndGoSpellings) {
  CliOptions o;
  EXPECT_EQ(Parse({"--top=5", "--alloc_space", "--lines", "x.heap"}, &o), -1);
  EXPECT_EQ(o.report, ReportKind::kTop);
  EXPECT_EQ(o.top_n, 5);
  EXPECT_EQ(o.view.sample_type, SampleType::kAllocSpace);
  EXPECT_EQ(o.view.granularity, Granularity::kLines);
  EXPECT_EQ(o.profiles, (std::vector<std::string>{"x.heap"}));
  CliOptions g;
  EXPECT_EQ(Parse({"-top=7", "-inuse_objects", "-focus=foo", "a.heap", "b.heap"}, &g), -1);
  EXPECT_EQ(g.top_n, 7);
  EXPECT_EQ(g.view.sample_type, SampleType::kInuseObjects);
  EXPECT_EQ(g.view.focus, "foo");
  EXPECT_EQ(g.profiles.size(), 2u);  // not ELF: both are profiles
  CliOptions t;
  EXPECT_EQ(Parse({"--top", "a.heap"}, &t), -1);
  EXPECT_EQ(t.report, ReportKind::kTop);
  EXPECT_EQ(t.top_n, 0);
}

TEST(Options, ProgramDetectedByElfMagic) {
  CliOptions o;
  EXPECT_EQ(Parse({"/proc/self/exe", "a.heap"}, &o), -1);
  EXPECT_EQ(o.program, "/proc/self/exe");
  EXPECT_EQ(o.profiles, (std::vector<std::string>{"a.heap"}));
}

TEST(Options, SymbolPathFlagBeforeEnvironment) {
  CliOptions o;
  setenv("PPROF_BINARY_PATH", "/env1::/env2/", 1);
  EXPECT_EQ(Parse({"--symbol_path=/flag1:/flag2", "a.heap"}, &o), -1);
  unsetenv("PPROF_BINARY_PATH");
  EXPECT_EQ(o.symbol_path, (std::vector<std::string>{"/flag1", "/flag2", "/env1", "/env2"}));
  CliOptions rel;
  EXPECT_EQ(Parse({"-symbol_path=syms", "a.heap"}, &rel), -1);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(rel.symbol_path, (std::vector<std::string>{std::string(cwd) + "/syms"}));
}

TEST(Options, RenderOptions) {
  CliOptions o;
  EXPECT_EQ(Parse({"--flamegraph=out.svg", "a.heap"}, &o), -1);
  EXPECT_EQ(o.report, ReportKind::kRender);
  EXPECT_EQ(o.render_format, RenderFormat::kFlameGraph);
  EXPECT_EQ(o.output, "out.svg");
  CliOptions s;
  EXPECT_EQ(Parse({"-svg", "-nodecount=20", "--output", "g.svg", "a.heap"}, &s), -1);
  EXPECT_EQ(s.render_format, RenderFormat::kSvg);
  EXPECT_EQ(s.view.nodecount, 20);
  EXPECT_EQ(s.output, "g.svg");
  EXPECT_DOUBLE_EQ(s.view.nodefraction, 0.005);
  EXPECT_DOUBLE_EQ(s.view.edgefraction, 0.001);
}

TEST(Options, ErrorsExitTwo) {
  testing::internal::CaptureStderr();
  CliOptions a, b, c, d, e;
  EXPECT_EQ(Parse({"--bogus", "a.heap"}, &a), 2);
  EXPECT_EQ(Parse({"--text", "--traces", "a.heap"}, &b), 2);
  EXPECT_EQ(Parse({}, &c), 2);
  EXPECT_EQ(Parse({"--nodefraction=2", "a.heap"}, &d), 2);
  EXPECT_EQ(Parse({"--inuse_space", "--alloc_space", "a.heap"}, &e), 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pprof-tool: "), std::string::npos);
  EXPECT_NE(err.find("usage: pprof-tool"), std::string::npos);
}

TEST(Options, SingleDashSpellingsOfEveryKind) {
  CliOptions a;  // -o with a separate value, a bare optional-value option
  EXPECT_EQ(Parse({"-o", "out.svg", "-svg", "a.heap"}, &a), -1);
  EXPECT_EQ(a.output, "out.svg");
  EXPECT_EQ(a.profiles, (std::vector<std::string>{"a.heap"}));
  CliOptions b;  // -o=x: the value is x, never "=x"
  EXPECT_EQ(Parse({"-o=x.svg", "-top", "a.heap"}, &b), -1);
  EXPECT_EQ(b.output, "x.svg");
  EXPECT_EQ(b.report, ReportKind::kTop);
  EXPECT_EQ(b.top_n, 0);
  EXPECT_EQ(b.profiles, (std::vector<std::string>{"a.heap"}));
  CliOptions c;  // a long name with one dash and '='
  EXPECT_EQ(Parse({"-output=x", "-nodefraction=0.5", "a.heap"}, &c), -1);
  EXPECT_EQ(c.output, "x");
  EXPECT_DOUBLE_EQ(c.view.nodefraction, 0.5);
  CliOptions d;  // bare --flamegraph does not take the profile as its file
  EXPECT_EQ(Parse({"--flamegraph", "a.heap"}, &d), -1);
  EXPECT_EQ(d.render_format, RenderFormat::kFlameGraph);
  EXPECT_EQ(d.output, "");
  EXPECT_EQ(d.profiles, (std::vector<std::string>{"a.heap"}));
  CliOptions e;  // after "--" nothing is an option
  EXPECT_EQ(Parse({"--", "-top"}, &e), -1);
  EXPECT_EQ(e.report, ReportKind::kText);
  EXPECT_EQ(e.profiles, (std::vector<std::string>{"-top"}));
}

TEST(Options, EveryLongOptionHasItsSingleDashSpelling) {
  // The single-dash spellings come from the CLI11 definitions, not from a second list: every
  // option the help lists is accepted with one dash and means the same as with two.
  testing::internal::CaptureStdout();
  CliOptions h;
  ASSERT_EQ(Parse({"--help"}, &h), 0);
  std::string help = testing::internal::GetCapturedStdout();
  std::vector<std::string> names;
  for (size_t at = help.find("\n  --"); at != std::string::npos; at = help.find("\n  --", at + 1)) {
    size_t end = help.find_first_of(" [,\n", at + 5);
    names.push_back(help.substr(at + 5, end - (at + 5)));
  }
  EXPECT_GT(names.size(), 30u);
  for (const std::string& name : names) {
    if (name == "help") continue;
    std::string one = "-" + name + "=1", two = "--" + name + "=1";
    bool flag = help.find("  --" + name + " ") != std::string::npos &&
                help.find("  --" + name + " TEXT") == std::string::npos &&
                help.find("  --" + name + " INT") == std::string::npos &&
                help.find("  --" + name + " FLOAT") == std::string::npos &&
                help.find("  --" + name + " [") == std::string::npos;
    if (flag) one = "-" + name, two = "--" + name;
    testing::internal::CaptureStderr();
    CliOptions x, y;
    int rx = Parse({one.c_str(), "a.heap"}, &x), ry = Parse({two.c_str(), "a.heap"}, &y);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(rx, ry) << name << ": " << err;
    EXPECT_EQ(err.find("unknown option"), std::string::npos) << name << ": " << err;
    EXPECT_EQ(x.report, y.report) << name;
    EXPECT_EQ(x.output, y.output) << name;
    EXPECT_EQ(x.view.sample_type, y.view.sample_type) << name;
    EXPECT_EQ(x.view.granularity, y.view.granularity) << name;
  }
}

// Every row of the view options table is a flag (an enum row one flag per choice) that sets
// its member, with the table's help text in --help.
TEST(Options, EveryViewFieldIsAFlagSettingItsMember) {
  testing::internal::CaptureStdout();
  CliOptions h;
  ASSERT_EQ(Parse({"--help"}, &h), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  for (const ViewField& field : kViewFields) {
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(ViewOptions().*member)>;
          CliOptions o;
          const std::string flag = std::string("--") + field.name;
          if constexpr (std::is_enum_v<T>) {
            for (const ViewChoice& c : field.choices) {
              CliOptions chosen;
              ASSERT_EQ(Parse({("--" + std::string(c.name)).c_str(), "a.heap"}, &chosen), -1)
                  << c.name;
              EXPECT_EQ(int(chosen.view.*member), c.value) << c.name;
              EXPECT_NE(help.find(c.help), std::string::npos) << c.name;
            }
          } else if constexpr (std::is_same_v<T, bool>) {
            ASSERT_EQ(Parse({flag.c_str(), "a.heap"}, &o), -1) << flag;
            EXPECT_TRUE(o.view.*member) << flag;
          } else if constexpr (std::is_same_v<T, std::string>) {
            ASSERT_EQ(Parse({(flag + "=x").c_str(), "a.heap"}, &o), -1) << flag;
            EXPECT_EQ(o.view.*member, "x") << flag;
          } else {
            ASSERT_EQ(Parse({(flag + "=0").c_str(), "a.heap"}, &o), -1) << flag;
            EXPECT_EQ(o.view.*member, T(0)) << flag;
          }
          if (field.choices.empty()) {
            EXPECT_NE(help.find("  " + flag), std::string::npos) << flag;
          }
        },
        field.member);
  }
  testing::internal::CaptureStderr();
  CliOptions two;
  EXPECT_EQ(Parse({"--lines", "--files", "a.heap"}, &two), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find(
                "choose one of --functions, --lines, --files, --addresses"),
            std::string::npos);
}

TEST(Options, UnknownSingleDashWordIsNotReadAsShortOptions) {
  testing::internal::CaptureStderr();
  CliOptions a;
  EXPECT_EQ(Parse({"-hxyz", "a.heap"}, &a), 2);  // not -h (help) followed by "xyz"
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pprof-tool: unknown option -hxyz"), std::string::npos) << err;
}

TEST(Options, ReportsNamesAndDifferences) {
  CliOptions t, p, d, k, a, f, g, n;
  EXPECT_EQ(Parse({"--tree", "a.heap"}, &t), -1);
  EXPECT_EQ(t.report, ReportKind::kTree);
  EXPECT_EQ(Parse({"-peek=^Load", "a.heap"}, &p), -1);
  EXPECT_EQ(p.report, ReportKind::kPeek);
  EXPECT_EQ(p.peek_regex, "^Load");
  EXPECT_EQ(Parse({"--diff_base=b.heap", "--drop_negative", "a.heap"}, &d), -1);
  EXPECT_EQ(d.diff_base, (std::vector<std::string>{"b.heap"}));
  EXPECT_TRUE(d.view.drop_negative);
  EXPECT_EQ(
      Parse({"--keep_allocator_frames", "--drop_frames=^absl::", "--show_from=^Srv", "a.heap"}, &k),
      -1);
  EXPECT_TRUE(k.view.keep_allocator_frames);
  EXPECT_EQ(k.view.drop_frames, "^absl::");
  EXPECT_EQ(k.view.show_from, "^Srv");
  EXPECT_EQ(Parse({"--no_drop_allocator", "a.heap"}, &a), -1);  // the old spelling
  EXPECT_TRUE(a.view.keep_allocator_frames);
  EXPECT_EQ(Parse({"--full_names", "a.heap"}, &f), -1);
  EXPECT_TRUE(f.view.full_names);
  EXPECT_EQ(Parse({"-symbolize=demangle=full", "a.heap"}, &g), -1);
  EXPECT_TRUE(g.view.full_names);
  EXPECT_EQ(Parse({"a.heap"}, &n), -1);  // the defaults
  EXPECT_FALSE(n.view.full_names);
  EXPECT_FALSE(n.view.keep_allocator_frames);
  EXPECT_FALSE(n.view.drop_negative);
}

TEST(Options, VersionHttpAndProgramWithoutProfile) {
  testing::internal::CaptureStdout();
  CliOptions v;
  EXPECT_EQ(Parse({"--version"}, &v), 0);
  EXPECT_EQ(testing::internal::GetCapturedStdout().rfind("pprof-tool (heapkit) ", 0), 0u);
  testing::internal::CaptureStderr();
  CliOptions h, p, s, b, t;
  EXPECT_EQ(Parse({"-http=:8080", "--no_browser", "a.heap"}, &h), -1);  // go pprof's spelling
  EXPECT_EQ(h.report, ReportKind::kHttp);
  EXPECT_EQ(h.http, ":8080");
  EXPECT_TRUE(h.no_browser);
  EXPECT_EQ(Parse({"--timeline=t.svg", "a.heap", "b.heap"}, &t), -1);
  EXPECT_EQ(t.report, ReportKind::kTimeline);
  EXPECT_EQ(t.output, "t.svg");
  EXPECT_EQ(Parse({"/proc/self/exe"}, &p), 2);
  EXPECT_EQ(Parse({"--symbolize=none", "a.heap"}, &s), 2);
  EXPECT_EQ(Parse({"--http=:0", "--top", "a.heap"}, &b), 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("choose one report"), std::string::npos) << err;
  EXPECT_NE(err.find("no profile given (/proc/self/exe is a program)"), std::string::npos) << err;
  EXPECT_NE(err.find("only demangle=full"), std::string::npos) << err;
}

// http:// profiles (cli/remote_source.h): go pprof's -seconds and -timeout, checked ranges.
TEST(Options, RemoteProfileOptions) {
  CliOptions d, g, e1, e2;
  EXPECT_EQ(Parse({"http://127.0.0.1:6060/debug/pprof/heap"}, &d), -1);
  EXPECT_EQ(d.profiles, (std::vector<std::string>{"http://127.0.0.1:6060/debug/pprof/heap"}));
  EXPECT_EQ(d.fetch.seconds, -1);
  EXPECT_EQ(d.fetch.timeout, 0);
  EXPECT_TRUE(IsRemoteSource(d.profiles[0]));
  EXPECT_FALSE(IsRemoteSource("/tmp/http:/x.heap"));
  EXPECT_EQ(Parse({"-seconds=30", "-timeout=2.5", "http://h:1/debug/pprof/allocs"}, &g), -1);
  EXPECT_EQ(g.fetch.seconds, 30);
  EXPECT_EQ(g.fetch.timeout, 2.5);
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"--seconds=-1", "http://h:1/x"}, &e1), 2);
  EXPECT_EQ(Parse({"--timeout=0", "http://h:1/x"}, &e2), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--seconds"), std::string::npos) << err;
  EXPECT_NE(err.find("--timeout"), std::string::npos) << err;
}

}  // namespace
}  // namespace heapkit::pprof
