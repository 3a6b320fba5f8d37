#include "pprof-tool/cli/debuginfod_bounds.h"
#include "pprof-tool/tool_settings.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace heapkit::pprof {
namespace {

std::string Env(const Setting& s) {
  const char* v = internal::ToolSettingText(s);
  return v != nullptr ? v : "";
}

std::string CachePath() {
  const std::string cache = Env(ToolSetting("DEBUGINFOD_CACHE_PATH"));
  if (!cache.empty()) return cache;
  const std::string xdg = Env(ToolSetting("XDG_CACHE_HOME"));
  if (!xdg.empty()) return xdg + "/debuginfod_client";
  const std::string home = Env(ToolSetting("HOME"));
  if (!home.empty()) return home + "/.cache/debuginfod_client";
  return "";
}

// "" when `dir` is fit to be the cache, else why not.
std::string CacheProblem(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return strerror(errno);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";  // the client reports it
    if (lstat(dir.c_str(), &st) != 0) return "";
  }
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by you";
  if ((st.st_mode & 022) != 0) return "others can write to it";
  return "";
}

}  // namespace

std::string BoundDebuginfodDownloads() {
  if (Env(ToolSetting("DEBUGINFOD_URLS")).empty()) return "";
  setenv("DEBUGINFOD_MAXSIZE", kDebuginfodMaxSize, /*overwrite=*/0);
  setenv("DEBUGINFOD_MAXTIME", kDebuginfodMaxTime, /*overwrite=*/0);
  const std::string dir = CachePath();
  const std::string problem = dir.empty() ? "" : CacheProblem(dir);
  if (problem.empty()) return "";
  unsetenv("DEBUGINFOD_URLS");
  return "debuginfod downloads off: the cache " + dir + " is not safe to write (" + problem +
         "); set DEBUGINFOD_CACHE_PATH to a directory of your own";
}

}  // namespace heapkit::pprof
