#include "heapcheck/suppressions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alloc/internal/log.h"

namespace heapkit::check {
namespace {

// A suppressions file is a short text file; anything bigger is a mistake (e.g. /dev/zero).
constexpr size_t kMaxSuppressionsBytes = size_t{1} << 20;

// '*' and '?' glob; allow_trailing: text may continue after the pattern ends.
bool GlobAt(const char* p, const char* pe, const char* s, const char* se, bool allow_trailing) {
  const char* star = nullptr;
  const char* resume = nullptr;
  for (;;) {
    if (p == pe && (allow_trailing || s == se)) return true;
    if (s < se && p < pe && (*p == '?' || *p == *s)) {
      ++p;
      ++s;
    } else if (p < pe && *p == '*') {
      star = p++;
      resume = s;
    } else if (star != nullptr && resume < se) {
      p = star + 1;
      s = ++resume;
    } else {
      return false;
    }
  }
}

void LogUnreadable(const char* path, const char* why) {
  internal::Log("cannot read HEAPCHECK_SUPPRESSIONS file '%s': %s; no suppressions", path, why);
}

bool IsBinary(const char* text, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) return true;
  }
  return false;
}

}  // namespace

bool SuppressionPatternMatches(const char* pattern, size_t plen, const char* text, size_t tlen) {
  bool anchored_start = plen > 0 && pattern[0] == '^';
  if (anchored_start) {
    ++pattern;
    --plen;
  }
  bool anchored_end = plen > 0 && pattern[plen - 1] == '$';
  if (anchored_end) --plen;
  const char* pe = pattern + plen;
  for (size_t start = 0; start <= tlen; ++start) {
    if (GlobAt(pattern, pe, text + start, text + tlen, !anchored_end)) return true;
    if (anchored_start) break;
  }
  return false;
}

// The whole file into text_: a regular file of at most kMaxSuppressionsBytes, read in full.
bool Suppressions::ReadFile(const char* path, size_t* size_out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    LogUnreadable(path, strerror(errno));
    return false;
  }
  struct stat st = {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > kMaxSuppressionsBytes) {
    const bool regular = S_ISREG(st.st_mode);
    close(fd);
    LogUnreadable(path, regular ? "larger than 1 MiB" : "not a regular file");
    return false;
  }
  size_t size = 0;
  bool read_error = false;
  while (size < kMaxSuppressionsBytes) {
    if (!text_.Resize(size + 4096)) break;
    ssize_t n = read(fd, text_.data() + size, 4096);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_error = true;
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  const int read_errno = errno;
  close(fd);
  text_.Resize(size);
  if (read_error) {
    LogUnreadable(path, strerror(read_errno));
    return false;
  }
  *size_out = size;
  return true;
}

// `leak:<pattern>` lines become patterns; blank lines and `#` comments are skipped; any other
// line is malformed (one log line names the first and counts them).
void Suppressions::ParseLines(const char* path, size_t size) {
  const char* text = text_.data();
  size_t line_no = 0, bad_lines = 0, first_bad = 0;
  for (size_t start = 0; start < size;) {
    size_t end = start;
    while (end < size && text[end] != '\n') ++end;
    ++line_no;
    size_t s = start, e = end;
    while (s < e && (text[s] == ' ' || text[s] == '\t')) ++s;
    while (e > s && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r')) --e;
    if (s < e && text[s] != '#') {
      if (e - s > 5 && std::memcmp(text + s, "leak:", 5) == 0) {
        patterns_.PushBack({static_cast<uint32_t>(s + 5), static_cast<uint32_t>(e - s - 5)});
      } else if (bad_lines++ == 0) {
        first_bad = line_no;
      }
    }
    start = end + 1;
  }
  if (bad_lines == 1) {
    internal::Log("HEAPCHECK_SUPPRESSIONS %s:%zu: expected 'leak:<pattern>'; line ignored", path,
                  first_bad);
  } else if (bad_lines > 1) {
    internal::Log(
        "HEAPCHECK_SUPPRESSIONS %s:%zu: expected 'leak:<pattern>'; %zu such lines "
        "ignored",
        path, first_bad, bad_lines);
  }
}

bool Suppressions::Load(const char* path) {
  size_t size = 0;
  if (!ReadFile(path, &size)) return false;
  if (IsBinary(text_.data(), size)) {
    LogUnreadable(path, "binary data, expected 'leak:<pattern>' lines");
    text_.Resize(0);
    return false;
  }
  ParseLines(path, size);
  return true;
}

bool Suppressions::Matches(const pprof::SourceFrame& f) const {
  for (const Pattern& p : patterns_) {
    const char* pat = text_.data() + p.offset;
    if (SuppressionPatternMatches(pat, p.length, f.function.data(), f.function.size()) ||
        SuppressionPatternMatches(pat, p.length, f.file.data(), f.file.size()) ||
        SuppressionPatternMatches(pat, p.length, f.module.data(), f.module.size()))
      return true;
  }
  return false;
}

}  // namespace heapkit::check
