#include "pprof-tool/proto/profile_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "pprof-tool/proto/gzip_io.h"

namespace heapkit::pprof {
namespace {

constexpr size_t kHead = 4096;

// Reads up to `limit` + 1 bytes of fd from offset 0 (one more than allowed tells "too big").
bool ReadUpTo(int fd, size_t limit, std::string* out, std::string* error) {
  out->clear();
  size_t want = limit + 1;
  char buf[1 << 16];
  while (out->size() < want) {
    ssize_t r = pread(fd, buf, std::min(sizeof buf, want - out->size()), off_t(out->size()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *error = std::string("cannot read: ") + strerror(errno);
      return false;
    }
    if (r == 0) break;
    out->append(buf, size_t(r));
  }
  return true;
}

bool Decode(const std::string& content, const std::string& path, Profile* profile,
            ParseError* error, const ProtoLimits& limits) {
  if (LooksLikeProfileProto(std::string_view(content).substr(0, kHead))) {
    return DecodeProfileProto(content, path, profile, error, limits);
  }
  return ParseProfileText(content, path, profile, error);
}

}  // namespace

bool LoadProfileFile(const std::string& path, Profile* profile, ParseError* error,
                     const ProtoLimits& limits) {
  auto fail = [&](const std::string& what) {
    error->file = path;
    error->line = 0;
    error->expected = what;
    return false;
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) close(fd);
    return ReadProfileFile(path, profile, error);  // its messages for these cases
  }
  std::string head, problem;
  if (!ReadUpTo(fd, kHead - 1, &head, &problem)) {
    close(fd);
    return fail(problem);
  }
  const bool gzip = IsGzip(head);
  if (!gzip && !LooksLikeProfileProto(head)) {
    close(fd);
    return ReadProfileFile(path, profile, error);  // legacy text, streamed
  }
  std::string data;
  bool ok = ReadUpTo(fd, limits.max_bytes, &data, &problem);
  close(fd);
  if (!ok) return fail(problem);
  if (data.size() > limits.max_bytes) {
    return fail("expected a file of at most " + std::to_string(limits.max_bytes >> 20) +
                " MiB, found a larger one");
  }
  if (!gzip) return DecodeProfileProto(data, path, profile, error, limits);
  std::string content;
  if (!GunzipBounded(data, limits.max_bytes, &content, &problem)) return fail(problem);
  data = std::string();
  return Decode(content, path, profile, error, limits);
}

}  // namespace heapkit::pprof
