#include "profiler/format/legacy_writer.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "profiler/format/unloaded_modules.h"

namespace heapkit::prof {
namespace {

void AppendCounts(OutputSink* sink, const RecordCounts& c) {
  sink->AppendDecimal(c.inuse_count, 6);
  sink->Append(": ", 2);
  sink->AppendDecimal(c.inuse_bytes, 8);
  sink->Append(" [", 2);
  sink->AppendDecimal(c.alloc_count, 6);
  sink->Append(": ", 2);
  sink->AppendDecimal(c.alloc_bytes, 8);
  sink->Append("] @", 3);
}

// "# heapkit: dump reason: <reason>\n", the reason kept to one line.
void AppendReason(OutputSink* sink, const char* reason) {
  sink->Append("# heapkit: dump reason: ");
  for (const char* p = reason; *p != '\0'; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    sink->AppendChar(c < 0x20 || c == 0x7F ? ' ' : *p);
  }
  sink->AppendChar('\n');
}

// "# heapkit: dump time: <unix seconds>.<ms> pid <pid>\n": when and by which process the dump
// was written, so a reader can tell a series of one process and draw a time axis.
void AppendTimeAndPid(OutputSink* sink) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t ms = now.tv_nsec / 1000000;
  sink->Append("# heapkit: dump time: ");
  sink->AppendDecimal(now.tv_sec);
  sink->AppendChar('.');
  sink->AppendChar(static_cast<char>('0' + ms / 100));
  sink->AppendChar(static_cast<char>('0' + ms / 10 % 10));
  sink->AppendChar(static_cast<char>('0' + ms % 10));
  sink->Append(" pid ");
  sink->AppendDecimal(getpid());
  sink->AppendChar('\n');
}

// A non-negative number as decimal text that strtod reads back to about 15 digits: "0",
// "1234.5" (at most three decimals, below 1e15), else "123456789012345e+7". Malloc-free.
void AppendNumber(OutputSink* sink, double v) {
  if (!(v > 0)) return sink->AppendChar('0');
  constexpr double kBig = 1e15;
  if (v < kBig) {
    const auto thousandths = static_cast<int64_t>(v * 1000 + 0.5);
    sink->AppendDecimal(thousandths / 1000);
    int fraction = static_cast<int>(thousandths % 1000), digits = 3;
    for (; digits > 0 && fraction % 10 == 0; --digits) fraction /= 10;  // "1.5", not "1.500"
    if (digits == 0) return;
    sink->AppendChar('.');
    for (int scale = digits == 3 ? 100 : digits == 2 ? 10 : 1; scale > 0; scale /= 10)
      sink->AppendChar(static_cast<char>('0' + fraction / scale % 10));
    return;
  }
  int exponent = 0;
  for (; v >= kBig && exponent < 400; ++exponent) v /= 10;  // at most ~300 steps
  sink->AppendDecimal(static_cast<int64_t>(v + 0.5));
  sink->Append("e+");
  sink->AppendDecimal(exponent);
}

// "# heapkit: variance <inuse n> <inuse bytes> <alloc n> <alloc bytes>\n" (see the header).
void AppendVariance(OutputSink* sink, const RecordVariance& v) {
  sink->Append("# heapkit: variance ");
  AppendNumber(sink, v.inuse_count);
  sink->AppendChar(' ');
  AppendNumber(sink, v.inuse_bytes);
  sink->AppendChar(' ');
  AppendNumber(sink, v.alloc_count);
  sink->AppendChar(' ');
  AppendNumber(sink, v.alloc_bytes);
  sink->AppendChar('\n');
}

bool IsEmpty(const RecordCounts& c) {
  return c.inuse_count == 0 && c.inuse_bytes == 0 && c.alloc_count == 0 && c.alloc_bytes == 0;
}

struct SumContext {
  RecordCounts totals;
  bool skip_empty;
};

void SumVisitor(void* ctx, const RecordCounts& c, const void* const*, int) {
  auto* s = static_cast<SumContext*>(ctx);
  if (s->skip_empty && IsEmpty(c)) return;
  s->totals.inuse_count += c.inuse_count;
  s->totals.inuse_bytes += c.inuse_bytes;
  s->totals.alloc_count += c.alloc_count;
  s->totals.alloc_bytes += c.alloc_bytes;
}

struct LineContext {
  OutputSink* sink;
  bool skip_empty;
};

void LineVisitor(void* ctx, const RecordCounts& c, const void* const* pcs, int depth) {
  auto* l = static_cast<LineContext*>(ctx);
  if (l->skip_empty && IsEmpty(c)) return;
  if (c.variance != nullptr) AppendVariance(l->sink, *c.variance);
  AppendCounts(l->sink, c);
  for (int i = 0; i < depth; ++i) {
    l->sink->AppendChar(' ');
    l->sink->AppendHex(reinterpret_cast<uintptr_t>(pcs[i]), 16);
  }
  l->sink->AppendChar('\n');
}

}  // namespace

bool AppendProcMaps(OutputSink* sink) {
  LiveModuleScan scan;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  bool ok = true;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    if (n == 0) break;
    sink->Append(buf, static_cast<size_t>(n));
    scan.Feed(buf, static_cast<size_t>(n));
  }
  close(fd);
  AppendUnloadedModules(sink, scan);
  return ok;
}

bool WriteLegacyProfile(OutputSink* sink, const LegacyProfile& profile) {
  SumContext sum{{0, 0, 0, 0, nullptr}, profile.skip_empty_records};
  if (profile.source != nullptr) profile.source(profile.source_ctx, &SumVisitor, &sum);
  sink->Append("heap profile: ");
  AppendCounts(sink, sum.totals);
  switch (profile.kind) {
    case ProfileKind::kHeapExact: sink->Append(" heapprofile\n"); break;
    case ProfileKind::kHeapSampled:
      sink->Append(" heap_v2/");
      sink->AppendDecimal(profile.sample_rate > 0 ? profile.sample_rate : 1);
      sink->AppendChar('\n');
      break;
    case ProfileKind::kGrowth: sink->Append(" growthz\n"); break;
  }
  if (profile.reason != nullptr && profile.reason[0] != '\0') {
    AppendReason(sink, profile.reason);
    AppendTimeAndPid(sink);
  }
  if (profile.append_comments != nullptr) profile.append_comments(sink);
  LineContext lines{sink, profile.skip_empty_records};
  if (profile.source != nullptr) profile.source(profile.source_ctx, &LineVisitor, &lines);
  if (profile.write_mapped_libraries) {
    sink->Append("\nMAPPED_LIBRARIES:\n");
    AppendProcMaps(sink);
  }
  // A reader tells a dump cut at a line boundary by this line's absence.
  if (profile.reason != nullptr && profile.reason[0] != '\0')
    sink->Append("# heapkit: end of dump\n");
  return sink->Flush();
}

bool WriteFileAtomically(const char* path, bool (*write)(void* ctx, FdSink* sink), void* ctx,
                         int* error) {
  int err = internal::CheckReplaceable(path, nullptr);
  if (err != 0) {
    if (error != nullptr) *error = err;
    return false;
  }
  char tmp[4200];
  // 0600: a dump holds the process's memory map (addresses) and its code's names.
  int fd = internal::CreateTempBeside(path, 0600, tmp, sizeof(tmp), &err);
  if (fd < 0) {
    if (error != nullptr) *error = err;
    return false;
  }
  bool ok;
  {
    FdSink sink(fd);
    sink.LimitToFileSizeRlimit();
    ok = write(ctx, &sink) && sink.Flush();
    if (!ok) err = sink.error() != 0 ? sink.error() : EIO;
  }
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok) {
    err = internal::CommitTemp(tmp, path);
    ok = err == 0;
  } else {
    unlink(tmp);
  }
  if (!ok && error != nullptr) *error = err;
  return ok;
}

bool WriteLegacyProfileFile(const char* path, const LegacyProfile& profile, int* error) {
  return WriteFileAtomically(
      path,
      [](void* ctx, FdSink* sink) {
        return WriteLegacyProfile(sink, *static_cast<const LegacyProfile*>(ctx));
      },
      const_cast<LegacyProfile*>(&profile), error);
}

}  // namespace heapkit::prof
