#include "profiler/format/unloaded_modules.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alloc/common.h"
#include "alloc/internal/fork_handlers.h"
#include "alloc/internal/spin_lock.h"

namespace heapkit::prof {
namespace {

// Plain data: the table is zero-initialized, with no constructor to run.
struct Module {
  bool used;
  bool pending;  // between NoteBeforeDlclose and NoteAfterDlclose
  char path[512];
  size_t path_length;
  char lines[kMaxUnloadedModuleLines];
  size_t lines_length;
};

internal::SpinLock g_lock;
Module g_modules[kMaxUnloadedModules] HEAPKIT_GUARDED_BY(g_lock);

// True when the maps line (no newline) ends with " <path>".
bool LineNamesPath(const char* line, size_t n, const char* path, size_t path_length) {
  return path_length > 0 && n > path_length && line[n - path_length - 1] == ' ' &&
         memcmp(line + n - path_length, path, path_length) == 0;
}

int Slot(const char* path, size_t length) {
  int free_slot = -1;
  for (int i = 0; i < kMaxUnloadedModules; ++i) {
    const Module& m = g_modules[i];
    if (m.used && m.path_length == length && memcmp(m.path, path, length) == 0) return i;
    if (!m.used && free_slot < 0) free_slot = i;
  }
  return free_slot;
}

// Copies the lines of /proc/self/maps naming m->path into m->lines (whole lines only).
void SnapshotLines(Module* m) {
  m->lines_length = 0;
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  char line[4352];
  size_t length = 0;
  bool overflow = false;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        if (length < sizeof line)
          line[length++] = buf[i];
        else
          overflow = true;
        continue;
      }
      if (!overflow && LineNamesPath(line, length, m->path, m->path_length) &&
          m->lines_length + length + 1 <= sizeof m->lines) {
        memcpy(m->lines + m->lines_length, line, length);
        m->lines_length += length;
        m->lines[m->lines_length++] = '\n';
      }
      length = 0;
      overflow = false;
    }
  }
  close(fd);
}

}  // namespace

void NoteBeforeDlclose(void* handle) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr || map->l_name[0] != '/') {
    return;
  }
  const size_t length = strlen(map->l_name);
  internal::SpinLockHolder h(&g_lock);
  if (length >= sizeof g_modules[0].path) return;
  const int slot = Slot(map->l_name, length);
  if (slot < 0) return;
  Module& m = g_modules[slot];
  memcpy(m.path, map->l_name, length);
  m.path_length = length;
  m.used = m.pending = true;
  SnapshotLines(&m);
}

void NoteAfterDlclose(int (*real_dlclose)(void* handle)) {
  // dlopen takes the loader's lock: called with ours released.
  for (int i = 0; i < kMaxUnloadedModules; ++i) {
    char path[sizeof g_modules[0].path + 1];
    {
      internal::SpinLockHolder h(&g_lock);
      if (!g_modules[i].pending) continue;
      memcpy(path, g_modules[i].path, g_modules[i].path_length);
      path[g_modules[i].path_length] = '\0';
    }
    void* still = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    const bool loaded = still != nullptr;
    if (still != nullptr) real_dlclose(still);
    internal::SpinLockHolder h(&g_lock);
    g_modules[i].pending = false;
    if (loaded || g_modules[i].lines_length == 0) g_modules[i].used = false;
  }
}

HEAPKIT_ALWAYS_RUN_CODE void RegisterUnloadedModulesForkHandlers() {
  HEAPKIT_ALWAYS_WRITTEN_DATA static bool registered = false;
  if (registered) return;
  registered = true;
  internal::HoldAcrossFork<g_lock>();
}

void LiveModuleScan::Feed(const char* data, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (data[i] == '\n') {
      if (!overflow_) Line();
      length_ = 0;
      overflow_ = false;
    } else if (length_ < sizeof line_) {
      line_[length_++] = data[i];
    } else {
      overflow_ = true;
    }
  }
}

void LiveModuleScan::Line() {
  internal::SpinLockHolder h(&g_lock);
  for (int i = 0; i < kMaxUnloadedModules; ++i) {
    const Module& m = g_modules[i];
    if (m.used && LineNamesPath(line_, length_, m.path, m.path_length)) live_[i] = true;
  }
}

void ForEachUnloadedModuleLine(const LiveModuleScan& scan,
                               void (*line)(void* ctx, const char* text, size_t length),
                               void* ctx) {
  internal::SpinLockHolder h(&g_lock);
  for (int i = 0; i < kMaxUnloadedModules; ++i) {
    const Module& m = g_modules[i];
    if (!m.used || m.pending || scan.Live(i)) continue;
    size_t at = 0;
    while (at < m.lines_length) {
      const char* nl = static_cast<const char*>(memchr(m.lines + at, '\n', m.lines_length - at));
      const size_t end = nl ? size_t(nl - m.lines) : m.lines_length;
      line(ctx, m.lines + at, end - at);
      at = end + 1;
    }
  }
}

void AppendUnloadedModules(OutputSink* sink, const LiveModuleScan& scan) {
  struct Ctx {
    OutputSink* sink;
    bool marked;
  } ctx{sink, false};
  ForEachUnloadedModuleLine(
      scan,
      [](void* c, const char* text, size_t length) {
        Ctx* x = static_cast<Ctx*>(c);
        if (!x->marked)
          x->sink->Append("# heapkit: unloaded modules (dlclose), as they were mapped:\n");
        x->marked = true;
        x->sink->Append(text, length);
        x->sink->AppendChar('\n');
      },
      &ctx);
}

}  // namespace heapkit::prof
