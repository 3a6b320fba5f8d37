#include "heapcheck/checker_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "heapcheck/checker_settings.h"

namespace heapkit::check {
namespace {

bool Equals(const char* a, const char* b) { return std::strcmp(a, b) == 0; }

// Paths taken from the environment are copied at start-up: programs that set their process
// title (perl's `$0 = ...`, setproctitle) overwrite the original environment strings in place,
// so a pointer into them reads garbage by the time the check runs at exit.
char g_suppressions_path[PATH_MAX];
char g_dump_directory[PATH_MAX];

// A copy of value in buf, or nullptr (with one line) if it does not fit.
const char* KeepCopy(const char* name, const char* value, char* buf, size_t size) {
  if (value == nullptr) return nullptr;
  if (std::strlen(value) >= size) {
    internal::Log("ignoring %s: longer than %zu bytes", name, size - 1);
    return nullptr;
  }
  std::strcpy(buf, value);
  return buf;
}

// HEAP_CHECK_FORK_SNAPSHOT: true (checks of a running program flood in a forked snapshot),
// false (every check stops the threads throughout), all (the exit and signal checks too).
void ReadForkSnapshot(Settings* s) {
  s->config.fork_snapshot = true;
  s->snapshot_ending_checks = false;
  const char* value = internal::SettingText(CheckerSetting("HEAP_CHECK_FORK_SNAPSHOT"));
  if (value == nullptr) return;
  bool on = true;
  if (Equals(value, "all")) {
    s->snapshot_ending_checks = true;
  } else if (internal::ParseBool(value, &on)) {
    s->config.fork_snapshot = on;
  } else {
    char shown[internal::kPrintableValueSize];
    internal::Log(
        "ignoring HEAP_CHECK_FORK_SNAPSHOT='%s': must be true, false or all; using "
        "default true",
        internal::PrintableValue(value, shown, sizeof(shown)));
  }
}

}  // namespace

bool ReadCheckerConfig(Settings* s) {
  const char* mode = internal::SettingText(CheckerSetting("HEAPCHECK"));
  if (mode == nullptr || mode[0] == '\0') return false;
  bool ignore_global_live = true, ignore_thread_live = true;
  if (Equals(mode, "minimal")) {
    s->mode = Mode::kMinimal;
  } else if (Equals(mode, "normal")) {
    s->mode = Mode::kNormal;
  } else if (Equals(mode, "strict")) {
    s->mode = Mode::kStrict;
    s->after_destructors = true;
  } else if (Equals(mode, "draconian")) {
    s->mode = Mode::kDraconian;
    s->after_destructors = true;
    ignore_global_live = ignore_thread_live = false;
  } else if (Equals(mode, "as-is")) {
    s->mode = Mode::kAsIs;
    s->after_destructors = internal::SettingBool(CheckerSetting("HEAP_CHECK_AFTER_DESTRUCTORS"));
    ignore_global_live = internal::SettingBool(CheckerSetting("HEAP_CHECK_IGNORE_GLOBAL_LIVE"));
    ignore_thread_live = internal::SettingBool(CheckerSetting("HEAP_CHECK_IGNORE_THREAD_LIVE"));
  } else if (Equals(mode, "local")) {
    s->mode = Mode::kLocal;
  } else {
    char shown[internal::kPrintableValueSize];
    internal::Log(
        "HEAPCHECK='%s' is not a known mode (minimal, normal, strict, draconian, "
        "as-is, local); leak checking is off",
        internal::PrintableValue(mode, shown, sizeof(shown)));
    return false;
  }
  s->global_check_pending = s->mode != Mode::kLocal;
  s->pid = getpid();
  s->config.scan_globals = ignore_global_live;
  s->config.scan_threads = ignore_thread_live;
  s->config.scan_anonymous =
      internal::SettingBool(CheckerSetting("HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS"));
  s->config.flood.max_pointer_offset =
      internal::SettingInt64(CheckerSetting("HEAP_CHECK_MAX_POINTER_OFFSET"));
  s->config.flood.source_alignment = static_cast<size_t>(
      internal::SettingInt64(CheckerSetting("HEAP_CHECK_POINTER_SOURCE_ALIGNMENT")));
  if ((s->config.flood.source_alignment & (s->config.flood.source_alignment - 1)) != 0) {
    internal::Log(
        "ignoring HEAP_CHECK_POINTER_SOURCE_ALIGNMENT='%zu': must be 1, 2, 4 or 8; "
        "using default 8",
        s->config.flood.source_alignment);
    s->config.flood.source_alignment = sizeof(void*);
  }
  s->config.test_pointer_alignment =
      internal::SettingBool(CheckerSetting("HEAP_CHECK_TEST_POINTER_ALIGNMENT"));
  s->config.stop_timeout_ms =
      static_cast<int>(internal::SettingInt64(CheckerSetting("HEAP_CHECK_STOP_TIMEOUT_MS")));
  ReadForkSnapshot(s);
  s->config.snapshot_timeout_ms =
      static_cast<int>(internal::SettingInt64(CheckerSetting("HEAP_CHECK_SNAPSHOT_TIMEOUT_MS")));
  s->report.test_pointer_alignment = s->config.test_pointer_alignment;
  s->report.flood = s->config.flood;
  s->check_children = internal::SettingBool(CheckerSetting("HEAP_CHECK_CHILDREN"));
  s->at_underscore_exit = internal::SettingBool(CheckerSetting("HEAP_CHECK_AT_UNDERSCORE_EXIT"));
  s->report.max_leaks = internal::SettingInt64(CheckerSetting("HEAP_CHECK_MAX_LEAKS"));
  s->report.identify_leaks = internal::SettingBool(CheckerSetting("HEAP_CHECK_IDENTIFY_LEAKS"));
  // libdw reads DEBUGINFOD_URLS itself (elfutils' client); a privileged process must not let
  // its caller's environment make it fetch files, so it gets the build-id search only.
  s->report.standard_debuginfo_search = !internal::SecureExecution();
  s->report.suppressions = KeepCopy("HEAPCHECK_SUPPRESSIONS",
                                    internal::SettingText(CheckerSetting("HEAPCHECK_SUPPRESSIONS")),
                                    g_suppressions_path, sizeof(g_suppressions_path));
  s->exit_code =
      static_cast<int>(internal::SettingInt64(CheckerSetting("HEAP_CHECK_ERROR_EXIT_CODE")));
  const char* dir = internal::SettingText(CheckerSetting("HEAP_CHECK_DUMP_DIRECTORY"));
  s->report.dump_directory = "/tmp";
  if (dir != nullptr && dir[0] != '\0') {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
      internal::Log(
          "ignoring HEAP_CHECK_DUMP_DIRECTORY='%s': not a writable directory; "
          "using default /tmp",
          dir);
    } else if (const char* kept = KeepCopy("HEAP_CHECK_DUMP_DIRECTORY", dir, g_dump_directory,
                                           sizeof(g_dump_directory))) {
      s->report.dump_directory = kept;
    }
  }
  s->report_path = internal::SettingText(CheckerSetting("HEAP_CHECK_REPORT_PATH"));
  s->at_signal = internal::SettingText(CheckerSetting("HEAP_CHECK_AT_SIGNAL"));
  s->live_min_interval_ms =
      internal::SettingInt64(CheckerSetting("HEAP_CHECK_LIVE_MIN_INTERVAL_MS"));
  if (constexpr const Setting& clean = CheckerSetting("HEAP_CHECK_REPORT_CLEAN");
      internal::SettingText(clean) != nullptr)
    s->report_clean = internal::SettingBool(clean) ? 1 : 0;
  return true;
}

}  // namespace heapkit::check
