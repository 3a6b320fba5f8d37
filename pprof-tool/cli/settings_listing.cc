#include "pprof-tool/cli/settings_listing.h"

#include "alloc/internal/alloc_settings.h"
#include "alloc/internal/settings_rows.h"
#include "heapcheck/checker_settings.h"
#include "pprof-tool/tool_settings.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::pprof {

std::string SettingsListing() {
  using internal::SettingsTable;
  return "Environment variables (unset or empty: the default; a refused value: one line, then "
         "the default;\na privileged (AT_SECURE) process reads them all as unset).\n\n"
         "The allocator (libheapkit_minimal.so, libheapkit.so):\n\n" +
         SettingsTable(internal::kAllocSettings) + "\nThe heap profiler (libheapkit.so):\n\n" +
         SettingsTable(prof::kProfilerSettings) + "\nThe leak checker (libheapkit.so):\n\n" +
         SettingsTable(check::kCheckerSettings) + "\npprof-tool:\n\n" +
         SettingsTable(kToolSettings);
}

}  // namespace heapkit::pprof
