// Settings: every environment variable a component reads, in one constexpr table per component
// (alloc/internal/alloc_settings.h, profiler/base/profiler_settings.h,
// heapcheck/checker_settings.h, pprof-tool/tool_settings.h), and the readers that take an entry
// of such a table.
//
// One entry says everything about its variable: name, type, default, the values accepted and a
// one-line meaning. The readers parse by it (bounds, suffixes), print the one line
//   heapkit: ignoring NAME='value': <why>; using default <default>
// for a value they refuse (env.h), and apply the AT_SECURE rule (env.h, EnvRaw). The component
// README's settings table is the table printed (settings_rows.h; `pprof-tool --settings` prints
// them all), and tests/alloc/unit/settings_test.cc checks that the two agree and that no other
// code reads the environment.
//
// A call site names its entry at compile time (SettingNamed): a variable missing from its
// component's table does not compile. The tables are constexpr data in .rodata, read without
// allocating, so the runtime may read them from the first malloc on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "alloc/internal/env.h"

extern "C" char** environ;

namespace heapkit::internal {

enum class SettingType : uint8_t {
  kInteger,  // decimal integer within [min, max]
  kSize,     // integer with an optional k/m/g suffix (powers of 1024) within [min, max]
  kNumber,   // decimal number within [number_min, number_max]
  kBool,     // 1/0, true/false, yes/no, on/off
  kText,     // a string, parsed by its user (`allowed` says what it accepts)
};

struct Setting {
  const char* name;
  SettingType type;
  const char* default_text;   // the default as the README shows it
  const char* allowed;        // accepted values as the README shows them: "lo..hi" for numbers
  const char* meaning;        // one line
  int64_t default_value = 0;  // kInteger, kSize; kBool: 0 or 1
  int64_t min = 0;
  int64_t max = 0;
  double number_default = 0;  // kNumber
  double number_min = 0;
  double number_max = 0;
  // kInteger whose default and bounds are known at run time only (a signal number relative to
  // SIGRTMAX): read with SettingInt64Within; `allowed` and `default_text` say them in words.
  bool bounds_at_run_time = false;
};

// Not constexpr: a SettingNamed that reaches it names no entry, and does not compile.
const Setting& NoSuchSettingInTheTable();

constexpr bool SameName(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

template <size_t N>
consteval const Setting& SettingNamed(const Setting (&table)[N], const char* name) {
  for (const Setting& s : table)
    if (SameName(s.name, name)) return s;
  return NoSuchSettingInTheTable();
}

// The readers. Unset or empty: the default, silently; refused: one line, then the default.
int64_t SettingInt64(const Setting& s);                    // kInteger, kSize
bool SettingInt64Given(const Setting& s, int64_t* value);  // true if set to an accepted value
int64_t SettingInt64Within(const Setting& s, int64_t default_value, int64_t min, int64_t max);
double SettingDouble(const Setting& s);  // kNumber
bool SettingBool(const Setting& s);      // kBool
// kText: the raw value or nullptr (unset, or an AT_SECURE process); it points into the
// environment block (env.h, EnvRaw: copy what must outlive start-up).
const char* SettingText(const Setting& s);

// The reader for code outside the runtime (pprof-tool, the symbolizer), which links none of it:
// getenv, with the runtime's AT_SECURE rule (env.h, SecureExecution).
inline const char* ToolSettingText(const Setting& s) {
  return SecureExecution() ? nullptr : std::getenv(s.name);
}

// The environment block as it is, to pass on to a child process (posix_spawn) or to filter for
// one; never to read a setting from.
inline char* const* EnvironmentForChild() { return environ; }

}  // namespace heapkit::internal
