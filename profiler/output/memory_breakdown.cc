#include "profiler/output/memory_breakdown.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "alloc/memory_residency.h"
#include "alloc/allocator.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/hex_digit.h"
#include "alloc/stats.h"
#include "alloc/observer_hooks.h"
#include "alloc/span_occupancy.h"
#include "profiler/table/stack_table.h"
#include "profiler/table/sample_estimate.h"
#include "alloc/sampling_period.h"

namespace heapkit::prof {
namespace {

// Reads a /proc file line by line with no allocation (lines longer than the buffer are cut).
class ProcLines {
 public:
  explicit ProcLines(const char* path) {
    const int saved_errno = errno;
    fd_ = open(path, O_RDONLY | O_CLOEXEC);
    errno = saved_errno;
  }
  ~ProcLines() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // The next line without its '\n', NUL-terminated; nullptr at the end.
  const char* Next() {
    for (;;) {
      char* nl = static_cast<char*>(memchr(buf_ + pos_, '\n', len_ - pos_));
      if (nl != nullptr) {
        *nl = '\0';
        const char* line = buf_ + pos_;
        pos_ = static_cast<size_t>(nl - buf_) + 1;
        return line;
      }
      if (pos_ > 0) {  // keep the partial line, refill behind it
        memmove(buf_, buf_ + pos_, len_ - pos_);
        len_ -= pos_;
        pos_ = 0;
      }
      if (len_ == sizeof(buf_) - 1) len_ = 0;  // a line longer than the buffer: drop it
      ssize_t n = fd_ < 0 ? 0 : read(fd_, buf_ + len_, sizeof(buf_) - 1 - len_);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (len_ == 0) return nullptr;
        buf_[len_] = '\0';  // last line without '\n'
        len_ = 0;
        return buf_;
      }
      len_ += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
  char buf_[4096];
  size_t len_ = 0;
  size_t pos_ = 0;
};

bool StartsWith(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

uint64_t ParseHex(const char*& p) {
  uint64_t v = 0;
  for (int d; (d = internal::HexDigitValue(*p)) >= 0; ++p) v = v * 16 + static_cast<uint64_t>(d);
  return v;
}

// "Rss:     123 kB" -> bytes.
uint64_t KiloBytesField(const char* line) {
  const char* p = strchr(line, ':');
  if (p == nullptr) return 0;
  ++p;
  while (*p == ' ' || *p == '\t') ++p;
  uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; ++p) v = v * 10 + static_cast<uint64_t>(*p - '0');
  return v << 10;
}

struct SmapsTotals {
  uint64_t thread_stacks = 0;
  uint64_t code_and_ro_data = 0;
  uint64_t file_data = 0;
  uint64_t anonymous = 0;
  uint64_t swap = 0;
  uint64_t sum = 0;  // every mapping's Rss
};

enum class MappingKind { kStack, kCode, kFileData, kAnonymous };

// One pass over /proc/self/smaps: each mapping's Rss by what the mapping is.
SmapsTotals ReadSmaps() {
  SmapsTotals t;
  ProcLines lines("/proc/self/smaps");
  MappingKind kind = MappingKind::kAnonymous;
  uint64_t prev_end = 0;
  bool prev_guard = false;  // the previous mapping was anonymous PROT_NONE
  while (const char* line = lines.Next()) {
    const char* p = line;
    const uint64_t start = ParseHex(p);
    if (*p == '-') {  // a mapping's header: start-end perms offset dev inode [name]
      ++p;
      const uint64_t end = ParseHex(p);
      while (*p == ' ') ++p;
      const char* perms = p;
      // Skip perms, offset, dev, inode to the name.
      for (int field = 0; field < 4 && *p != '\0'; ++field) {
        while (*p != ' ' && *p != '\0') ++p;
        while (*p == ' ') ++p;
      }
      const char* name = p;
      const bool named = name[0] != '\0';
      const bool writable = perms[1] == 'w';
      const bool guard = !named && perms[0] == '-' && perms[1] == '-' && perms[2] == '-';
      if (strcmp(name, "[stack]") == 0 || (!named && writable && prev_guard && prev_end == start)) {
        kind = MappingKind::kStack;
      } else if (!named || strcmp(name, "[heap]") == 0 || StartsWith(name, "[anon")) {
        kind = MappingKind::kAnonymous;
      } else if (name[0] == '[' || !writable) {  // [vdso], [vvar], [vsyscall]; text, rodata
        kind = MappingKind::kCode;
      } else {
        kind = MappingKind::kFileData;
      }
      prev_guard = guard;
      prev_end = end;
      continue;
    }
    if (StartsWith(line, "Rss:")) {
      const uint64_t rss = KiloBytesField(line);
      t.sum += rss;
      switch (kind) {
        case MappingKind::kStack: t.thread_stacks += rss; break;
        case MappingKind::kCode: t.code_and_ro_data += rss; break;
        case MappingKind::kFileData: t.file_data += rss; break;
        case MappingKind::kAnonymous: t.anonymous += rss; break;
      }
    } else if (StartsWith(line, "Swap:")) {
      t.swap += KiloBytesField(line);
    }
  }
  return t;
}

void Line(OutputSink* sink, const char* key, uint64_t bytes) {
  sink->Append("# heapkit: memory ");
  sink->Append(key);
  sink->AppendChar(' ');
  sink->AppendDecimal(static_cast<int64_t>(bytes));
  sink->AppendChar('\n');
}

uint64_t Minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void Field(OutputSink* sink, const char* name, size_t value) {
  sink->AppendChar(' ');
  sink->Append(name);
  sink->AppendChar('=');
  sink->AppendDecimal(static_cast<int64_t>(value));
}

// "# heapkit: size_class size=<bytes> spans=<n> objects_per_span=<n> out=<objects out of the
// spans> transfer=<of which in the transfer cache> free=<free objects stranded in the spans>
// mostly_empty=<spans with at most 1/8 of their objects out>", one line per class in use.
void AppendClassOccupancy(OutputSink* sink) {
  // From the arena, not the stack: dumps may run on threads with small stacks.
  constexpr size_t kMax = alloc::kNumClassesMax;
  auto* classes = static_cast<alloc::ClassOccupancy*>(
      internal::MetaAlloc(kMax * sizeof(alloc::ClassOccupancy)));
  if (classes == nullptr) return;
  const size_t n = alloc::GetClassOccupancy(classes, kMax);
  for (size_t c = 1; c < n; ++c) {
    const alloc::ClassOccupancy& o = classes[c];
    if (o.spans == 0) continue;
    sink->Append("# heapkit: size_class");
    Field(sink, "size", o.object_size);
    Field(sink, "spans", o.spans);
    Field(sink, "objects_per_span", o.objects_per_span);
    Field(sink, "out", o.objects_out);
    Field(sink, "transfer", o.transfer_objects);
    Field(sink, "free", o.free_objects);
    Field(sink, "mostly_empty", o.mostly_empty_spans);
    sink->AppendChar('\n');
  }
  internal::MetaFree(classes, kMax * sizeof(alloc::ClassOccupancy));
}

// Requested and usable bytes of the live objects, estimated from the recorded ones (each
// weighted by the bytes it stands for, as the profile's lines are; exact in exact mode): their
// ratio is the share of size-class rounding in the live heap.
struct RoundingSums {
  double requested = 0;
  double usable = 0;
  int64_t rate = 0;
};

RoundingSums SumRecordedObjects() {
  RoundingSums sums;
  sums.rate = alloc::SamplingPeriod();
  if (!GlobalStackTable().initialised()) return sums;
  GlobalStackTable().ForEachLiveObject(
      [](void* ctx, const void* object, StackRef, size_t size) {
        auto* s = static_cast<RoundingSums*>(ctx);
        if (size == 0) return;
        const double weight =
            static_cast<double>(EstimateBytes(size, s->rate)) / static_cast<double>(size);
        s->requested += weight * static_cast<double>(size);
        s->usable += weight * static_cast<double>(alloc::UsableSize(object));
      },
      &sums);
  return sums;
}

std::atomic<uint64_t> g_endpoint_heap_bytes{0};

}  // namespace

void SetEndpointHeapBytes(uint64_t bytes) {
  g_endpoint_heap_bytes.store(bytes, std::memory_order_relaxed);
}

void AppendMemoryBreakdown(OutputSink* sink) {
  alloc::AllocatorStats s;
  alloc::GetAllocatorStats(&s);
  alloc::MemoryResidency m;
  alloc::MeasureMemoryResidency(&m);
  // RSS is the sum of the mappings' Rss: the same figure as smaps_rollup's, without a second
  // walk of every page table (the kernel's walk is most of a dump's cost on a large heap).
  const SmapsTotals smaps = ReadSmaps();
  const uint64_t rss = smaps.sum;

  // Free objects were written when freed (their link), so they are counted resident; the
  // never-carved ones and the span tails are measured.
  const uint64_t central_free =
      Minus(s.central_free_bytes, m.uncarved.mapped) + m.uncarved.resident;
  const uint64_t free_in_spans =
      s.thread_cache_free_bytes + s.transfer_free_bytes + central_free + m.span_tails.resident;
  const uint64_t ours = m.heap_in_use.resident + m.heap_free.resident + m.heap_returned.resident +
                        m.page_map.resident + m.arena.resident;
  Line(sink, "rss", rss);
  Line(sink, "live_heap", s.in_use_bytes);
  Line(sink, "live_heap_resident", Minus(m.heap_in_use.resident, free_in_spans));
  Line(sink, "thread_cache_free", s.thread_cache_free_bytes);
  Line(sink, "transfer_cache_free", s.transfer_free_bytes);
  Line(sink, "central_free", central_free);
  Line(sink, "span_tails", m.span_tails.resident);
  Line(sink, "pageheap_free_resident", m.heap_free.resident + m.heap_returned.resident);
  Line(sink, "pageheap_free", m.heap_free.mapped);
  Line(sink, "pageheap_returned", m.heap_returned.mapped);
  Line(sink, "heap_untouched", m.heap_in_use.untouched() + m.heap_free.untouched());
  Line(sink, "metadata_page_map", m.page_map.resident);
  Line(sink, "metadata_page_map_reserved", m.page_map.mapped);
  Line(sink, "metadata_arena", m.arena.resident);
  Line(sink, "metadata_arena_reserved", m.arena.mapped);
  Line(sink, "thread_stacks", smaps.thread_stacks);
  Line(sink, "code_and_ro_data", smaps.code_and_ro_data);
  Line(sink, "file_data", smaps.file_data);
  Line(sink, "anonymous", smaps.anonymous);
  Line(sink, "other_anonymous", Minus(smaps.anonymous, ours));
  Line(sink, "swap", smaps.swap);
  const uint64_t endpoint = g_endpoint_heap_bytes.load(std::memory_order_relaxed);
  const uint64_t live_resident = Minus(m.heap_in_use.resident, free_in_spans);
  Line(sink, "heapkit_endpoint", endpoint < live_resident ? endpoint : live_resident);
  const RoundingSums rounding = SumRecordedObjects();
  Line(sink, "recorded_requested", static_cast<uint64_t>(rounding.requested));
  Line(sink, "recorded_usable", static_cast<uint64_t>(rounding.usable));
  AppendClassOccupancy(sink);
}

}  // namespace heapkit::prof
