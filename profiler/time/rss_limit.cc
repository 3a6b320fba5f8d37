// The RSS-limit dump (rss_limit.h).
#include "profiler/time/rss_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <initializer_list>

#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "profiler/base/profiler_basics.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::prof {
namespace {

constexpr const char* kVariable = "HEAP_PROFILE_RSS_LIMIT";

// Guarded by the state lock.
struct RssLimitState {
  RssLimitSetting setting;
  int pid = 0;          // the process fd was opened in (/proc/self is resolved at open)
  int fd = -1;          // /proc/self/statm or the cgroup's memory.current
  bool cgroup = false;  // fd is memory.current (bytes), else statm (pages)
  int64_t limit = 0;    // bytes; 0: off
  bool armed = true;    // below the re-arm level since the last crossing
};
constinit RssLimitState g_rss;

// Reads a small file at offset 0 into buf (NUL-terminated); false on error.
bool ReadSmall(int fd, char* buf, size_t size) {
  ssize_t n = pread(fd, buf, size - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

bool ReadFileText(const char* path, char* buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  bool ok = ReadSmall(fd, buf, size);
  close(fd);
  return ok;
}

// The leading decimal number of text ("max" and non-numbers: -1).
int64_t LeadingNumber(const char* text) {
  if (*text < '0' || *text > '9') return -1;
  int64_t v = 0;
  for (; *text >= '0' && *text <= '9'; ++text) v = v * 10 + (*text - '0');
  return v;
}

// The process's cgroup v2 directory (from the "0::<path>" line of /proc/self/cgroup, under
// /sys/fs/cgroup or a hybrid system's /sys/fs/cgroup/unified) whose memory.current exists;
// false if none.
bool FindCgroupDirectory(char* dir, size_t size) {
  char text[4096];
  if (!ReadFileText("/proc/self/cgroup", text, sizeof(text))) return false;
  const char* line = strstr(text, "0::");
  if (line == nullptr || (line != text && line[-1] != '\n')) return false;
  line += 3;
  char path[1024];
  size_t n = 0;
  while (line[n] != '\0' && line[n] != '\n' && n + 1 < sizeof(path)) {
    path[n] = line[n];
    ++n;
  }
  path[n] = '\0';
  if (strstr(path, "..") != nullptr) return false;
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    internal::FormatTo(dir, size, "%s%s", root, strcmp(path, "/") == 0 ? "" : path);
    char probe[1200];
    internal::FormatTo(probe, sizeof(probe), "%s/memory.current", dir);
    if (access(probe, R_OK) == 0) return true;
  }
  return false;
}

// The smaller of the cgroup's memory.max and memory.high in bytes; 0 if neither is set.
int64_t CgroupLimit(const char* dir) {
  int64_t limit = 0;
  for (const char* name : {"memory.max", "memory.high"}) {
    char path[1200], text[64];
    internal::FormatTo(path, sizeof(path), "%s/%s", dir, name);
    if (!ReadFileText(path, text, sizeof(text))) continue;
    const int64_t v = LeadingNumber(text);
    if (v > 0 && (limit == 0 || v < limit)) limit = v;
  }
  return limit;
}

int64_t MemTotal() {
  char text[4096];
  if (!ReadFileText("/proc/meminfo", text, sizeof(text))) return 0;
  const char* p = strstr(text, "MemTotal:");
  if (p == nullptr) return 0;
  p += 9;
  while (*p == ' ') ++p;
  const int64_t kb = LeadingNumber(p);
  return kb > 0 ? kb * 1024 : 0;
}

// The figure the check compares, in bytes; -1 on error.
int64_t CurrentFigure() {
  char text[128];
  if (!ReadSmall(g_rss.fd, text, sizeof(text))) return -1;
  if (g_rss.cgroup) return LeadingNumber(text);
  const char* p = strchr(text, ' ');  // statm: size resident shared ...
  const int64_t pages = p != nullptr ? LeadingNumber(p + 1) : -1;
  return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

}  // namespace

bool ParseRssLimit(const char* text, RssLimitSetting* out) {
  *out = RssLimitSetting{};
  const size_t n = strlen(text);
  if (n >= 2 && text[n - 1] == '%') {
    int v = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (text[i] < '0' || text[i] > '9' || v > 100) return false;
      v = v * 10 + (text[i] - '0');
    }
    if (v < 1 || v > 100) return false;
    out->percent = v;
    return true;
  }
  int64_t bytes;
  if (!internal::ParseInt64(text, true, &bytes) || bytes <= 0) return false;
  out->bytes = bytes;
  return true;
}

RssLimitSetting ReadRssLimitSetting() {
  RssLimitSetting s;
  const char* raw = internal::SettingText(ProfilerSetting(kVariable));
  if (raw == nullptr || raw[0] == '\0') return s;
  if (!ParseRssLimit(raw, &s)) {
    char shown[internal::kPrintableValueSize];
    internal::Log(
        "ignoring %s='%s': expected bytes (k/m/g suffixes) or a percentage 1%%..100%%; "
        "no RSS-limit dumps",
        kVariable, internal::PrintableValue(raw, shown, sizeof(shown)));
  }
  return s;
}

void BeginRssLimit(const RssLimitSetting& setting) {
  if (g_rss.fd >= 0) close(g_rss.fd);
  g_rss = RssLimitState{};
  g_rss.setting = setting;
  g_rss.pid = static_cast<int>(getpid());
  if (setting.bytes <= 0 && setting.percent <= 0) return;
  char dir[1100];
  int64_t cgroup_limit = 0;
  if (setting.percent > 0 && FindCgroupDirectory(dir, sizeof(dir))) cgroup_limit = CgroupLimit(dir);
  const char* what;
  if (cgroup_limit > 0) {
    char path[1200];
    internal::FormatTo(path, sizeof(path), "%s/memory.current", dir);
    g_rss.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    g_rss.cgroup = true;
    g_rss.limit = cgroup_limit / 100 * setting.percent;
    what = "the cgroup's memory.current";
  } else {
    g_rss.fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    const int64_t total = setting.percent > 0 ? MemTotal() : 0;
    g_rss.limit = setting.bytes > 0 ? setting.bytes : total / 100 * setting.percent;
    what = setting.bytes > 0 ? "RSS" : "RSS (no cgroup v2 memory limit: percent of MemTotal)";
  }
  if (g_rss.fd < 0 || g_rss.limit <= 0 || CurrentFigure() < 0) {
    internal::Log("%s: cannot read %s (%s); no RSS-limit dumps", kVariable, what,
                  g_rss.fd < 0 ? ErrName(errno) : "no limit found");
    if (g_rss.fd >= 0) close(g_rss.fd);
    g_rss.fd = -1;
    g_rss.limit = 0;
    return;
  }
  if (internal::Verbose())
    internal::Log("heap profiler: a dump when %s reaches %lld bytes", what,
                  static_cast<long long>(g_rss.limit));
}

bool RssLimitOn() { return g_rss.limit > 0; }

bool CheckRssLimitLocked(char* reason, size_t size) {
  if (g_rss.limit <= 0) return false;
  if (g_rss.pid != static_cast<int>(getpid())) BeginRssLimit(g_rss.setting);  // forked child
  if (g_rss.limit <= 0) return false;
  const int64_t now = CurrentFigure();
  if (now < 0) return false;
  if (!g_rss.armed) {
    if (now < g_rss.limit / 10 * 9) g_rss.armed = true;
    return false;
  }
  if (now < g_rss.limit) return false;
  g_rss.armed = false;
  internal::FormatTo(reason, size, "%s %lld MB reached the limit of %lld MB",
                     g_rss.cgroup ? "cgroup memory" : "RSS", static_cast<long long>(now / kMiB),
                     static_cast<long long>(g_rss.limit / kMiB));
  return true;
}

}  // namespace heapkit::prof
