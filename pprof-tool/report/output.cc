#include "pprof-tool/report/output.h"

#include "alloc/internal/safe_file.h"
#include "pprof-tool/tool_settings.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace heapkit::pprof {

namespace {

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Writes all of `bytes` to fd and closes it; a failure of either names `path` and the cause.
bool WriteAndClose(int fd, std::string_view bytes, const std::string& path, std::string* error) {
  const bool ok = WriteAll(fd, bytes);
  const int saved = errno;
  if (::close(fd) != 0 || !ok) {
    *error = "cannot write " + path + ": " + std::strerror(ok ? errno : saved);
    return false;
  }
  return true;
}

// A non-regular `path` (lstat gave `st`) may be written in place when it is a character device,
// FIFO or socket, or a link owned by us or by root to one of those or to a regular file
// (/dev/stdout, which is /proc/self/fd/1, which is a file when stdout is redirected). A link
// another user owns (planted in /tmp) is never followed, as the kernel's protected_symlinks rule
// does in sticky directories; block devices and directories are refused.
bool WritableInPlace(const std::string& path, const struct stat& st, std::string* why) {
  if (S_ISLNK(st.st_mode) && st.st_uid != ::geteuid() && st.st_uid != 0) {
    *why = "is a symbolic link owned by another user; refusing to follow it";
    return false;
  }
  struct stat target = st;
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &target) != 0) target.st_mode = 0;
  if (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode) || S_ISSOCK(target.st_mode)) return true;
  if (S_ISLNK(st.st_mode) && S_ISREG(target.st_mode)) return true;
  *why = S_ISLNK(st.st_mode) ? internal::ReplaceRefusal(ELOOP) : internal::ReplaceRefusal(EINVAL);
  return false;
}

// A new or regular file: written as a fresh temporary beside it (O_EXCL|O_NOFOLLOW) and renamed
// over it, so a failed write never leaves half a file and a name planted by someone else is
// never written through. A replaced file keeps its permission bits; another user's is refused.
bool ReplaceRegularFile(const std::string& path, std::string_view bytes, std::string* error) {
  struct stat existing;
  int err = internal::CheckReplaceable(path.c_str(), &existing);
  if (err != 0) {
    const char* refusal = internal::ReplaceRefusal(err);
    *error = path + (refusal ? std::string(" ") + refusal : ": " + std::string(std::strerror(err)));
    return false;
  }
  std::vector<char> tmp(path.size() + 32);
  const int fd = internal::CreateTempBeside(path.c_str(), 0666, tmp.data(), tmp.size(), &err);
  if (fd < 0) {
    *error = path + ": cannot open for writing: " + std::strerror(err);
    return false;
  }
  if (existing.st_mode != 0 && ::fchmod(fd, existing.st_mode & 07777) != 0) {
    *error = path + ": cannot keep its permissions: " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.data());
    return false;
  }
  if (!WriteAndClose(fd, bytes, path, error)) {
    ::unlink(tmp.data());
    return false;
  }
  err = internal::CommitTemp(tmp.data(), path.c_str());
  if (err != 0) {
    *error = "cannot write " + path + ": " + std::strerror(err);
    return false;
  }
  return true;
}

bool ExecutableOnPath(const char* name) {
  const char* path = internal::ToolSettingText(ToolSetting("PATH"));
  if (path == nullptr) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) dir = ".";
    if (::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

bool WriteOutput(const std::string& path, std::string_view bytes, std::string* error) {
  if (path.empty() || path == "-") {
    std::fflush(stdout);
    if (!WriteAll(STDOUT_FILENO, bytes)) {
      *error = std::string("cannot write to stdout: ") + std::strerror(errno);
      return false;
    }
    return true;
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Not a regular file: a stream the user named (/dev/stdout -> /proc/self/fd/1, a FIFO, a
    // terminal) is written in place; anything else is refused rather than replaced.
    std::string why;
    if (!WritableInPlace(path, st, &why)) {
      *error = path + " " + why;
      return false;
    }
    // The file our stdout already is (/dev/stdout redirected with `>>`): write where stdout
    // stands, like --output=-, rather than truncate it.
    struct stat target, out;
    if (::stat(path.c_str(), &target) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 &&
        target.st_dev == out.st_dev && target.st_ino == out.st_ino) {
      return WriteOutput("", bytes, error);
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) {
      *error = path + ": cannot open for writing: " + std::strerror(errno);
      return false;
    }
    return WriteAndClose(fd, bytes, path, error);
  }
  return ReplaceRegularFile(path, bytes, error);
}

bool WriteTempFile(std::string_view suffix, std::string_view bytes, std::string* path,
                   std::string* error) {
  const char* tmpdir = internal::ToolSettingText(ToolSetting("TMPDIR"));
  std::string templ = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                      "/pprof-tool-XXXXXX" + std::string(suffix);
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const int fd = ::mkstemps(buf.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    *error = "cannot create a temporary file " + templ + ": " + std::strerror(errno);
    return false;
  }
  *path = buf.data();
  return WriteAndClose(fd, bytes, *path, error);
}

bool OpenInBrowser(const std::string& path) {
  std::string program;
  if (const char* b = internal::ToolSettingText(ToolSetting("BROWSER"));
      b != nullptr && *b != '\0') {
    program = b;
  } else if ((internal::ToolSettingText(ToolSetting("DISPLAY")) != nullptr ||
              internal::ToolSettingText(ToolSetting("WAYLAND_DISPLAY")) != nullptr) &&
             ExecutableOnPath("xdg-open")) {
    program = "xdg-open";
  } else {
    return false;
  }
  std::vector<char*> argv = {program.data(), const_cast<char*>(path.c_str()), nullptr};
  pid_t pid;
  return ::posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(),
                        internal::EnvironmentForChild()) == 0;
}

}  // namespace heapkit::pprof
