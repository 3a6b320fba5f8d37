#include "alloc/internal/log.h"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "alloc/internal/alloc_settings.h"

namespace heapkit::internal {
namespace {

// A bounded output sink: fills a buffer, flushing to fd when full (fd < 0: truncate silently).
struct Sink {
  char* buf;
  size_t size;
  size_t len = 0;
  size_t needed = 0;
  int fd = -1;

  void Put(char c) {
    ++needed;
    if (len + 1 >= size) {
      if (fd < 0) return;
      WriteAll(fd, buf, len);
      len = 0;
    }
    buf[len++] = c;
  }
  void PutStr(const char* s) {
    if (s == nullptr) s = "(null)";
    while (*s) Put(*s++);
  }
  void PutUnsigned(unsigned long long v, unsigned base) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v % base];
      v /= base;
    } while (v != 0);
    while (n > 0) Put(digits[--n]);
  }
  void PutSigned(long long v) {
    if (v < 0) {
      Put('-');
      PutUnsigned(0ULL - static_cast<unsigned long long>(v), 10);
    } else {
      PutUnsigned(static_cast<unsigned long long>(v), 10);
    }
  }
};

// Formats one conversion into `tmp` (no padding); returns its length.
size_t FormatOne(char spec, int longs, bool size_t_arg, va_list* ap, char* tmp, size_t room) {
  Sink one{tmp, room};
  switch (spec) {
    case 'd':
    case 'i':
      if (size_t_arg)
        one.PutSigned(va_arg(*ap, ssize_t));
      else if (longs >= 2)
        one.PutSigned(va_arg(*ap, long long));
      else if (longs == 1)
        one.PutSigned(va_arg(*ap, long));
      else
        one.PutSigned(va_arg(*ap, int));
      break;
    case 'u':
    case 'x': {
      unsigned base = spec == 'x' ? 16 : 10;
      if (size_t_arg)
        one.PutUnsigned(va_arg(*ap, size_t), base);
      else if (longs >= 2)
        one.PutUnsigned(va_arg(*ap, unsigned long long), base);
      else if (longs == 1)
        one.PutUnsigned(va_arg(*ap, unsigned long), base);
      else
        one.PutUnsigned(va_arg(*ap, unsigned), base);
      break;
    }
    case 'p':
      one.PutStr("0x");
      one.PutUnsigned(reinterpret_cast<uintptr_t>(va_arg(*ap, void*)), 16);
      break;
    case 'c': one.Put(static_cast<char>(va_arg(*ap, int))); break;
    default: break;
  }
  return one.len;
}

// Supports flags '-' and '0' and a decimal width (e.g. %12zu, %-20s, %08x).
void Format(Sink& out, const char* fmt, va_list ap_in) {
  va_list ap;
  va_copy(ap, ap_in);
  for (const char* p = fmt; *p; ++p) {
    if (*p != '%') {
      out.Put(*p);
      continue;
    }
    ++p;
    bool left = false, zero = false;
    for (;; ++p) {
      if (*p == '-')
        left = true;
      else if (*p == '0')
        zero = true;
      else
        break;
    }
    size_t width = 0;
    while (*p >= '0' && *p <= '9') width = width * 10 + static_cast<size_t>(*p++ - '0');
    int longs = 0;
    bool size_t_arg = false;
    while (*p == 'l') {
      ++longs;
      ++p;
    }
    if (*p == 'z') {
      size_t_arg = true;
      ++p;
    }
    if (*p == '\0') break;
    if (*p == '%') {
      out.Put('%');
      continue;
    }
    if (*p == 's') {
      const char* s = va_arg(ap, const char*);
      if (s == nullptr) s = "(null)";
      size_t n = strlen(s);
      if (!left)
        for (size_t i = n; i < width; ++i) out.Put(' ');
      out.PutStr(s);
      if (left)
        for (size_t i = n; i < width; ++i) out.Put(' ');
      continue;
    }
    if (*p != 'd' && *p != 'i' && *p != 'u' && *p != 'x' && *p != 'p' && *p != 'c') {
      out.Put('%');
      out.Put(*p);
      continue;
    }
    char tmp[48];
    size_t n = FormatOne(*p, longs, size_t_arg, &ap, tmp, sizeof(tmp));
    size_t start = 0;
    if (!left) {
      if (zero && n > 0 && tmp[0] == '-') {
        out.Put('-');
        start = 1;
      }
      for (size_t i = n; i < width; ++i) out.Put(zero ? '0' : ' ');
    }
    for (size_t i = start; i < n; ++i) out.Put(tmp[i]);
    if (left)
      for (size_t i = n; i < width; ++i) out.Put(' ');
  }
  va_end(ap);
}

void VLogTo(int fd, const char* prefix, const char* fmt, va_list ap) {
  int saved_errno = errno;
  char buf[4096];
  Sink out{buf, sizeof(buf)};
  out.fd = fd;
  out.PutStr(prefix);
  Format(out, fmt, ap);
  if (out.len == 0 || buf[out.len - 1] != '\n') out.Put('\n');
  WriteAll(fd, buf, out.len);
  errno = saved_errno;
}

}  // namespace

bool WriteAll(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

size_t FormatTo(char* buf, size_t size, const char* fmt, ...) {
  char dummy;
  if (size == 0) {
    buf = &dummy;
    size = 1;
  }
  Sink out{buf, size};
  va_list ap;
  va_start(ap, fmt);
  Format(out, fmt, ap);
  va_end(ap);
  buf[out.len] = '\0';
  return out.needed;
}

namespace {
int g_log_fd = STDERR_FILENO;
}  // namespace

int SetLogFd(int fd) {
  const int previous = g_log_fd;
  g_log_fd = fd;
  return previous;
}

void Log(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VLogTo(g_log_fd, "heapkit: ", fmt, ap);
  va_end(ap);
}

void LogRaw(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VLogTo(g_log_fd, "", fmt, ap);
  va_end(ap);
}

void Fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VLogTo(g_log_fd, "heapkit: ", fmt, ap);
  va_end(ap);
  abort();
}

int64_t VerboseLevel() {
  // Parsed once for every user of the level. No function-local static: its initialization guard
  // would need the C++ runtime (cxx_runtime_weak.h). Threads racing on the very first call may
  // each parse (and report a malformed value); all store the same value.
  static std::atomic<bool> parsed{false};
  static std::atomic<int64_t> level{0};
  if (parsed.load(std::memory_order_acquire)) return level.load(std::memory_order_relaxed);
  int64_t value = SettingInt64(AllocSetting("PERFTOOLS_VERBOSE"));
  level.store(value, std::memory_order_relaxed);
  parsed.store(true, std::memory_order_release);
  return value;
}

bool Verbose() { return VerboseLevel() > 0; }

}  // namespace heapkit::internal
