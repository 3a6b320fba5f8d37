#include "heapcheck/follow_up_tool.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "alloc/internal/log.h"
#include "heapcheck/checker_settings.h"

namespace heapkit::check {
namespace {

// A regular executable file at `path`, resolved into buf.
bool Usable(const char* path, char* buf, size_t size) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0) return false;
  char resolved[PATH_MAX];
  if (realpath(path, resolved) == nullptr || std::strlen(resolved) >= size) return false;
  std::strcpy(buf, resolved);
  return true;
}

bool BesideChecker(char* buf, size_t size) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&FindPprofTool), &info) == 0 || info.dli_fname == nullptr)
    return false;
  char dir[PATH_MAX];
  if (realpath(info.dli_fname, dir) == nullptr) return false;
  char* slash = std::strrchr(dir, '/');
  if (slash == nullptr) return false;
  *slash = '\0';
  static const char* const kRelative[] = {"/pprof-tool/pprof-tool", "/../bin/pprof-tool",
                                          "/../../bin/pprof-tool"};
  for (const char* rel : kRelative) {
    char candidate[PATH_MAX + 32];
    internal::FormatTo(candidate, sizeof(candidate), "%s%s", dir, rel);
    if (Usable(candidate, buf, size)) return true;
  }
  return false;
}

bool OnPath(char* buf, size_t size) {
  const char* path = internal::SettingText(CheckerSetting("PATH"));
  if (path == nullptr) return false;
  while (*path != '\0') {
    const char* end = std::strchr(path, ':');
    const size_t len = end != nullptr ? static_cast<size_t>(end - path) : std::strlen(path);
    if (len > 0 && path[0] == '/' && len < PATH_MAX) {
      char candidate[PATH_MAX + 16];
      std::memcpy(candidate, path, len);
      std::strcpy(candidate + len, "/pprof-tool");
      if (Usable(candidate, buf, size)) return true;
    }
    if (end == nullptr) break;
    path = end + 1;
  }
  return false;
}

}  // namespace

bool FindPprofTool(char* buf, size_t size) {
  if (BesideChecker(buf, size) || OnPath(buf, size)) return true;
  internal::FormatTo(buf, size, "pprof-tool");
  return false;
}

}  // namespace heapkit::check
