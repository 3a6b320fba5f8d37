#include "heapcheck/task_status.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alloc/internal/hex_digit.h"
#include "alloc/internal/log.h"

namespace heapkit::check {
namespace {

// The value after "\n<key>:" (or at the start of the text), blanks skipped; nullptr if absent.
const char* FieldValue(const char* text, const char* key) {
  const size_t len = std::strlen(key);
  for (const char* line = text; line != nullptr && *line != '\0';) {
    if (std::strncmp(line, key, len) == 0 && line[len] == ':') {
      const char* p = line + len + 1;
      while (*p == ' ' || *p == '\t') ++p;
      return p;
    }
    line = std::strchr(line, '\n');
    if (line != nullptr) ++line;
  }
  return nullptr;
}

bool ParseHex(const char* p, uint64_t* out) {
  if (p == nullptr) return false;
  uint64_t v = 0;
  int digits = 0;
  for (;; ++p, ++digits) {
    const int d = internal::HexDigitValue(*p);
    if (d < 0) break;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *out = v;
  return digits > 0;
}

bool ParseDecimal(const char* p, pid_t* out) {
  if (p == nullptr || *p < '0' || *p > '9') return false;
  long v = 0;
  for (; *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
  *out = static_cast<pid_t>(v);
  return true;
}

}  // namespace

bool ParseTaskStatus(const char* text, TaskStatus* out) {
  TaskStatus s;
  if (!ParseHex(FieldValue(text, "SigBlk"), &s.blocked)) return false;
  const char* state = FieldValue(text, "State");
  s.exited = state != nullptr && (*state == 'Z' || *state == 'X');
  if (!ParseDecimal(FieldValue(text, "TracerPid"), &s.tracer)) s.tracer = 0;
  *out = s;
  return true;
}

bool ReadTaskStatus(pid_t tid, TaskStatus* out) {
  char path[64];
  internal::FormatTo(path, sizeof(path), "/proc/self/task/%d/status", static_cast<int>(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // About 1.5 KiB; SigBlk comes before the long lists (Cpus_allowed, ...), so a
  // status longer than the buffer still holds it (a Groups line of thousands is the limit).
  char buf[8192];
  size_t len = 0;
  while (len < sizeof(buf) - 1) {
    const ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  close(fd);
  buf[len] = '\0';
  return len > 0 && ParseTaskStatus(buf, out);
}

}  // namespace heapkit::check
