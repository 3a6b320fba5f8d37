// The settings tables (alloc/internal/settings.h) against what they describe:
//  - each entry is consistent (its documented default and range are its parsed ones);
//  - each component README's settings table is its code table, row for row;
//  - no code but the settings readers reads the environment, and each component reads from its
//    own table (a scan of the source tree);
//  - the readers take their bounds and defaults from the entry.
#include "alloc/internal/settings.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "alloc/internal/alloc_settings.h"
#include "alloc/internal/settings_rows.h"
#include "heapcheck/checker_settings.h"
#include "pprof-tool/tool_settings.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::internal {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = HEAPKIT_SOURCE_DIR;

struct Component {
  const char* folder;    // under the source root
  const char* accessor;  // its table's consteval lookup
  std::span<const Setting> table;
};
const Component kComponents[] = {
    {"alloc", "AllocSetting", kAllocSettings},
    {"profiler", "ProfilerSetting", prof::kProfilerSettings},
    {"heapcheck", "CheckerSetting", check::kCheckerSettings},
    {"pprof-tool", "ToolSetting", pprof::kToolSettings},
};

std::string Row(const Setting& s) { return SettingRow(s); }

// The rows under the README's settings table header.
std::vector<std::string> ReadmeRows(const fs::path& readme) {
  std::ifstream in(readme);
  std::vector<std::string> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (!in_table) {
      if (line == kSettingsTableHeader) {
        in_table = true;
        std::getline(in, line);  // |---|...
      }
      continue;
    }
    if (line.empty() || line[0] != '|') break;
    rows.push_back(line);
  }
  return rows;
}

TEST(Settings, EveryComponentReadmeTableIsItsCodeTable) {
  for (const Component& c : kComponents) {
    const fs::path readme = kSource / c.folder / "README.md";
    std::vector<std::string> expected;
    for (const Setting& s : c.table) expected.push_back(Row(s));
    const std::vector<std::string> found = ReadmeRows(readme);
    EXPECT_FALSE(found.empty()) << readme
                                << " has no settings table (header: " << kSettingsTableHeader
                                << ")";
    EXPECT_EQ(found, expected) << readme << ": the settings table differs from the code's; "
                               << "its rows, as the code prints them (settings_test --print "
                               << c.folder << "), are above";
  }
}

bool ParseBound(const Setting& s, const std::string& text, int64_t* out) {
  return ParseInt64(text.c_str(), s.type == SettingType::kSize, out);
}

TEST(Settings, EveryEntrySaysWhatItParses) {
  for (const Component& c : kComponents) {
    for (size_t i = 0; i < c.table.size(); ++i) {
      const Setting& s = c.table[i];
      SCOPED_TRACE(s.name);
      for (size_t j = 0; j < i; ++j) EXPECT_STRNE(s.name, c.table[j].name) << "twice";
      for (const char* field : {s.name, s.default_text, s.allowed, s.meaning}) {
        ASSERT_NE(field, nullptr);
        EXPECT_NE(field[0], '\0');
        EXPECT_EQ(std::strchr(field, '|'), nullptr) << "a '|' would split the README's row";
      }
      const std::string allowed = s.allowed;
      switch (s.type) {
        case SettingType::kInteger:
        case SettingType::kSize: {
          if (s.bounds_at_run_time) break;
          const size_t dots = allowed.find("..");
          ASSERT_NE(dots, std::string::npos) << "allowed must start with lo..hi";
          const size_t end = allowed.find(' ', dots);
          int64_t lo, hi, def;
          ASSERT_TRUE(ParseBound(s, allowed.substr(0, dots), &lo));
          ASSERT_TRUE(ParseBound(s, allowed.substr(dots + 2, end - dots - 2), &hi));
          EXPECT_EQ(lo, s.min);
          EXPECT_EQ(hi, s.max);
          if (std::string(s.default_text) == "unset") {
            EXPECT_FALSE(s.default_value >= s.min && s.default_value <= s.max)
                << "unset: its default is no accepted value";
          } else {
            ASSERT_TRUE(ParseBound(s, s.default_text, &def));
            EXPECT_EQ(def, s.default_value);
          }
          break;
        }
        case SettingType::kNumber: {
          const size_t dots = allowed.find("..");
          ASSERT_NE(dots, std::string::npos);
          double lo, hi, def;
          ASSERT_TRUE(ParseDouble(allowed.substr(0, dots).c_str(), &lo));
          ASSERT_TRUE(ParseDouble(allowed.substr(dots + 2).c_str(), &hi));
          ASSERT_TRUE(ParseDouble(s.default_text, &def));
          EXPECT_EQ(lo, s.number_min);
          EXPECT_EQ(hi, s.number_max);
          EXPECT_EQ(def, s.number_default);
          break;
        }
        case SettingType::kBool: {
          EXPECT_EQ(allowed, "bool");
          const std::string d = s.default_text;
          if (d != "unset") {
            EXPECT_EQ(d, s.default_value ? "true" : "false");
          }
          break;
        }
        case SettingType::kText: break;
      }
    }
  }
}

// Comments removed (// and /* */), string literals kept: a reader named in a comment is no read.
std::string CodeOf(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  std::string code;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      code += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i);
      if (i == std::string::npos) break;
      ++i;
    } else if (text[i] == '"') {  // a literal, with its escapes (a "//" inside is no comment)
      code += text[i];
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') code += text[i++];
        code += text[i];
      }
      if (i < text.size()) code += text[i];
    } else {
      code += text[i];
    }
  }
  return code;
}

// The readers: the only code that touches the environment.
bool IsSettingsReader(const std::string& relative) {
  for (const char* reader : {"alloc/internal/env.h", "alloc/internal/env.cc",
                             "alloc/internal/settings.h", "alloc/internal/settings.cc"})
    if (relative == reader) return true;
  return false;
}

TEST(Settings, NoCodeButTheReadersReadsTheEnvironment) {
  const std::regex reads(
      R"(\b(getenv|secure_getenv|EnvRaw|EnvInt64|EnvInt64Given|EnvDouble|EnvBool)\s*\(|\benviron\b|\b__environ\b)");
  const std::regex accessor(R"(\b(AllocSetting|ProfilerSetting|CheckerSetting|ToolSetting)\s*\()");
  int files = 0;
  for (const Component& c : kComponents) {
    for (const auto& entry : fs::recursive_directory_iterator(kSource / c.folder)) {
      const fs::path& p = entry.path();
      if (!entry.is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
      const std::string relative = fs::relative(p, kSource).string();
      const std::string code = CodeOf(p);
      ++files;
      std::smatch m;
      if (!IsSettingsReader(relative) && std::regex_search(code, m, reads))
        ADD_FAILURE() << relative << " reads the environment (" << m.str()
                      << "): read a settings table entry (alloc/internal/settings.h)";
      // A component reads its own table; the symbolizer (profiler/symbolize) reads the
      // profiler's.
      for (auto it = std::sregex_iterator(code.begin(), code.end(), accessor);
           it != std::sregex_iterator(); ++it) {
        if ((*it)[1] != c.accessor && relative.rfind("alloc/internal/", 0) != 0)
          ADD_FAILURE() << relative << " reads " << (*it)[1] << "'s table, not " << c.accessor
                        << "'s";
      }
    }
  }
  EXPECT_GT(files, 100);  // the tree was found
}

// The scan above finds what it looks for (so that its silence means something).
TEST(Settings, TheScanSeesAStrayRead) {
  const fs::path stray = fs::temp_directory_path() / "heapkit_settings_stray.cc";
  std::ofstream(stray) << "// getenv(\"IN_A_COMMENT\")\nconst char* p = \"getenv(\";\n"
                          "int f() { return std::getenv(\"X\") != nullptr; }\n";
  const std::string code = CodeOf(stray);
  fs::remove(stray);
  EXPECT_EQ(code.find("IN_A_COMMENT"), std::string::npos);
  const std::regex reads(R"(\bgetenv\s*\()");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(code.begin(), code.end(), reads), std::sregex_iterator()),
      2);  // the literal and the call: the scan errs on the side of a false alarm
}

TEST(Settings, ReadersTakeBoundsAndDefaultsFromTheEntry) {
  constexpr Setting kSize{.name = "HEAPKIT_SETTINGS_TEST_SIZE",
                          .type = SettingType::kSize,
                          .default_text = "4k",
                          .allowed = "1..1m",
                          .meaning = "test",
                          .default_value = 4096,
                          .min = 1,
                          .max = 1 << 20};
  int64_t v = 0;
  unsetenv(kSize.name);
  EXPECT_FALSE(SettingInt64Given(kSize, &v));
  EXPECT_EQ(v, 4096);
  setenv(kSize.name, "64k", 1);
  EXPECT_TRUE(SettingInt64Given(kSize, &v));
  EXPECT_EQ(v, 64 << 10);
  setenv(kSize.name, "2m", 1);  // above max: refused, the default
  testing::internal::CaptureStderr();
  EXPECT_FALSE(SettingInt64Given(kSize, &v));
  EXPECT_EQ(v, 4096);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "heapkit: ignoring HEAPKIT_SETTINGS_TEST_SIZE='2m': must be between 1 and 1048576; "
            "using default 4096\n");
  unsetenv(kSize.name);

  constexpr Setting kFlag{.name = "HEAPKIT_SETTINGS_TEST_FLAG",
                          .type = SettingType::kBool,
                          .default_text = "true",
                          .allowed = "bool",
                          .meaning = "test",
                          .default_value = 1};
  EXPECT_TRUE(SettingBool(kFlag));
  setenv(kFlag.name, "off", 1);
  EXPECT_FALSE(SettingBool(kFlag));
  unsetenv(kFlag.name);
}

TEST(Settings, RowIsTheReadmeRow) {
  EXPECT_EQ(
      Row(AllocSetting("TCMALLOC_TRANSFER_NUM_OBJ")),
      "| `TCMALLOC_TRANSFER_NUM_OBJ` | integer | 512 | 2..16384 | cap on the batch of objects "
      "moved between tiers |");
}

}  // namespace
}  // namespace heapkit::internal

// `settings_test --print <folder>`: the README table of a component, as the code has it
// (`pprof-tool --settings` prints the same tables for every component).
int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--print") {
    for (const auto& c : heapkit::internal::kComponents) {
      if (c.folder != std::string(argv[2])) continue;
      std::fputs(heapkit::internal::SettingsTable(c.table).c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "no component %s\n", argv[2]);
    return 2;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
