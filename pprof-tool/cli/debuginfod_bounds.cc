#include "pprof-tool/cli/debuginfod_bounds.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace heapkit::pprof {
namespace {

std::string Env(const char* name) {
  const char* v = getenv(name);
  return v != nullptr ? v : "";
}

std::string CachePath() {
  if (!Env("DEBUGINFOD_CACHE_PATH").empty()) return Env("DEBUGINFOD_CACHE_PATH");
  if (!Env("XDG_CACHE_HOME").empty()) return Env("XDG_CACHE_HOME") + "/debuginfod_client";
  if (!Env("HOME").empty()) return Env("HOME") + "/.cache/debuginfod_client";
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
  if (Env("DEBUGINFOD_URLS").empty()) return "";
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
