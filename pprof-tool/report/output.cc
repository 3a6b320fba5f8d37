#include "pprof-tool/report/output.h"

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

extern char** environ;

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

bool ExecutableOnPath(const char* name) {
  const char* path = std::getenv("PATH");
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
  // A regular file (or a new one) is written next to its final name and renamed over it, so a
  // failed write (full disk, file size limit) never leaves a half-written file in place of a
  // complete one. Devices, FIFOs and sockets (/dev/stdout, a pipe) are written directly.
  struct stat st;
  const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (special) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = path + ": cannot open for writing: " + std::strerror(errno);
      return false;
    }
    return WriteAndClose(fd, bytes, path, error);
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = path + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  if (!WriteAndClose(fd, bytes, path, error)) {
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool WriteTempFile(std::string_view suffix, std::string_view bytes, std::string* path,
                   std::string* error) {
  const char* tmpdir = std::getenv("TMPDIR");
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
  if (const char* b = std::getenv("BROWSER"); b != nullptr && *b != '\0') {
    program = b;
  } else if ((std::getenv("DISPLAY") != nullptr || std::getenv("WAYLAND_DISPLAY") != nullptr) &&
             ExecutableOnPath("xdg-open")) {
    program = "xdg-open";
  } else {
    return false;
  }
  std::vector<char*> argv = {program.data(), const_cast<char*>(path.c_str()), nullptr};
  pid_t pid;
  return ::posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ) == 0;
}

}  // namespace heapkit::pprof
