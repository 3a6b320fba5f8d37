#include "pprof-tool/report/source_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "alloc/internal/safe_file.h"

namespace heapkit::pprof {
namespace {

std::string TrimPrefix(const std::string& name, const std::vector<std::string>& prefixes) {
  for (std::string p : prefixes) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (p.empty() || name.compare(0, p.size(), p) != 0) continue;
    if (name.size() == p.size()) continue;
    if (p != "/" && name[p.size()] != '/') continue;
    size_t at = p.size();
    while (at < name.size() && name[at] == '/') ++at;
    return name.substr(at);
  }
  return name;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

bool Under(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

bool ReadLines(const std::string& path, std::vector<std::string>* lines, std::string* why) {
  int err = 0;
  const int fd = internal::OpenRegularFile(path.c_str(), &err);
  if (fd < 0) {
    *why = err == EINVAL ? "not a regular file" : strerror(err);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || size_t(st.st_size) > kMaxSourceFileBytes) {
    close(fd);
    *why = "larger than " + std::to_string(kMaxSourceFileBytes >> 20) + " MiB";
    return false;
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, size_t(n));
    if (text.size() > kMaxSourceFileBytes) {  // grew while read
      close(fd);
      *why = "larger than " + std::to_string(kMaxSourceFileBytes >> 20) + " MiB";
      return false;
    }
  }
  close(fd);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines->push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines->empty()) *why = "empty";
  return !lines->empty();
}

}  // namespace

bool ReadSourceFile(const SourceAccess& access, const std::string& name,
                    std::vector<std::string>* lines, std::string* why) {
  const std::vector<std::string> dirs =
      access.source_path.empty() ? std::vector<std::string>{"."} : access.source_path;
  const std::string path = TrimPrefix(name, access.trim_path);
  if (path.empty()) {
    *why = "no file name";
    return false;
  }
  if (path[0] != '/') {
    *why = "not found under " +
           std::string(access.source_path.empty() ? "the current directory" : "--source_path");
    for (const std::string& dir : dirs) {
      const std::string candidate = dir + "/" + path;
      if (::access(candidate.c_str(), F_OK) != 0) continue;
      if (access.profile_named.count(name) != 0) {  // no way out of dir by ".." or a link
        const std::string real = RealPath(candidate), real_dir = RealPath(dir);
        if (real.empty() || real_dir.empty() || !Under(real, real_dir)) {
          *why = "the profile names it, outside --source_path";
          return false;
        }
      }
      return ReadLines(candidate, lines, why);
    }
    return false;
  }
  if (access.profile_named.count(name) == 0) return ReadLines(path, lines, why);
  const std::string real = RealPath(path);
  for (const std::string& dir : dirs) {
    const std::string real_dir = RealPath(dir);
    if (!real.empty() && !real_dir.empty() && Under(real, real_dir))
      return ReadLines(real, lines, why);
  }
  *why = "the profile names it, outside --source_path";
  return false;
}

}  // namespace heapkit::pprof
