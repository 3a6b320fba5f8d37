// pprof-tool's settings (alloc/internal/settings.h): every environment variable the tool reads,
// each through internal::ToolSettingText. pprof-tool/README.md's "Settings" table is this
// table. The tool's options are its command line; these are the few things it takes from the
// environment, most of them the conventions of other programs.
#pragma once

#include "alloc/internal/settings.h"

namespace heapkit::pprof {

using internal::Setting;
using internal::SettingType;

inline constexpr Setting kToolSettings[] = {
    {.name = "PPROF_BINARY_PATH",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "directories, colon-separated",
     .meaning = "where to look for binaries and debug files, after `--symbol_path` (go pprof's)"},
    {.name = "TMPDIR",
     .type = SettingType::kText,
     .default_text = "/tmp",
     .allowed = "an absolute directory",
     .meaning = "where fetched profiles and `--web` pages are written"},
    {.name = "BROWSER",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "a program",
     .meaning = "opens `--web` pages (unset: `xdg-open` with a display)"},
    {.name = "DISPLAY",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "X11's",
     .meaning = "set: a display is there for `xdg-open`"},
    {.name = "WAYLAND_DISPLAY",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "Wayland's",
     .meaning = "set: a display is there for `xdg-open`"},
    {.name = "PATH",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "directories, colon-separated",
     .meaning = "where `xdg-open` is looked for"},
    {.name = "GVBINDIR",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "a directory",
     .meaning = "graphviz's plugin directory, named when its configuration is missing"},
    {.name = "DEBUGINFOD_URLS",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "debuginfod's",
     .meaning = "missing debug files are downloaded from these servers (bounded in size and time)"},
    {.name = "DEBUGINFOD_CACHE_PATH",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "a directory of your own",
     .meaning = "debuginfod's cache (else `$XDG_CACHE_HOME`'s or `$HOME`'s); unsafe: no downloads"},
    {.name = "XDG_CACHE_HOME",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "a directory",
     .meaning = "holds debuginfod's cache when `DEBUGINFOD_CACHE_PATH` is unset"},
    {.name = "HOME",
     .type = SettingType::kText,
     .default_text = "unset",
     .allowed = "a directory",
     .meaning = "holds debuginfod's cache (`.cache/debuginfod_client`) when neither is set"},
};

consteval const Setting& ToolSetting(const char* name) {
  return internal::SettingNamed(kToolSettings, name);
}

}  // namespace heapkit::pprof
