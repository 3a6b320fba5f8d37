#include "heapcheck/anonymous_roots.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "alloc/internal/runtime_mappings.h"

namespace heapkit::check {
namespace {

constexpr uintptr_t kPage = 4096;
constexpr size_t kResidencyBatch = 4096;  // pages per pagemap read (16 MiB of address space)
constexpr uint64_t kPagemapPresent = uint64_t{1} << 63;
constexpr uint64_t kPagemapSwapped = uint64_t{1} << 62;

uintptr_t PageDown(uintptr_t a) { return a & ~(kPage - 1); }
uintptr_t PageUp(uintptr_t a) { return (a + kPage - 1) & ~(kPage - 1); }

bool IsAnonymousData(const MapsLine& m) {
  if (!m.readable || !m.writable || m.perms.size() < 4 || m.perms[3] != 'p') return false;
  return m.path.empty() || m.path == "[heap]" || m.path.starts_with("[anon:");
}

// Which pages hold data: resident or swapped out (/proc/self/pagemap), or resident (mincore,
// where pagemap cannot be read: swapped pages then count as absent). Pages no longer mapped,
// or whose state cannot be told, are absent: never read. (alloc/internal/page_residency.h
// measures RSS: it leaves out pages shared with a fork parent until written, which hold data.)
class Residency {
 public:
  explicit Residency(MmapArray<uint64_t>* buffer) : buffer_(buffer) {
    fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  }
  ~Residency() {
    if (fd_ >= 0) close(fd_);
  }
  Residency(const Residency&) = delete;
  Residency& operator=(const Residency&) = delete;

  // Calls run(start, end) for each run of pages that hold data in the page-aligned [start,
  // end), and adds the bytes of absent pages to *absent. False when run did.
  template <typename Fn>
  bool ForEachResidentRun(uintptr_t start, uintptr_t end, uint64_t* absent, Fn run) {
    uintptr_t run_start = 0;
    for (uintptr_t batch = start; batch < end;) {
      const size_t pages = std::min<size_t>((end - batch) / kPage, kResidencyBatch);
      Read(batch, pages);
      for (size_t i = 0; i < pages; ++i) {
        const uintptr_t page = batch + i * kPage;
        if (present_[i]) {
          if (run_start == 0) run_start = page;
        } else {
          *absent += kPage;
          if (run_start != 0 && !run(run_start, page)) return false;
          run_start = 0;
        }
      }
      batch += pages * kPage;
    }
    return run_start == 0 || run(run_start, end);
  }

 private:
  void Read(uintptr_t start, size_t pages) {
    uint64_t* entries = buffer_->data();
    present_ = reinterpret_cast<unsigned char*>(entries + kResidencyBatch);
    if (fd_ >= 0) {
      const size_t want = pages * sizeof(uint64_t);
      const ssize_t got = pread(fd_, entries, want, static_cast<off_t>(start / kPage * 8));
      if (got == static_cast<ssize_t>(want)) {
        for (size_t i = 0; i < pages; ++i)
          present_[i] = (entries[i] & (kPagemapPresent | kPagemapSwapped)) != 0;
        return;
      }
      close(fd_);  // unreadable here (a restricted /proc): mincore from now on
      fd_ = -1;
    }
    const int saved_errno = errno;
    const int rc = mincore(reinterpret_cast<void*>(start), pages * kPage, present_);
    const int err = errno;
    errno = saved_errno;
    if (rc == 0) {
      for (size_t i = 0; i < pages; ++i) present_[i] &= 1;
      return;
    }
    // Part of the range is no longer mapped (ENOMEM): page by page; any other error: none.
    for (size_t i = 0; i < pages; ++i) {
      unsigned char v = 0;
      present_[i] = err == ENOMEM &&
                    mincore(reinterpret_cast<void*>(start + i * kPage), kPage, &v) == 0 && (v & 1);
    }
    errno = saved_errno;
  }

  MmapArray<uint64_t>* buffer_;
  unsigned char* present_ = nullptr;
  int fd_ = -1;
};

// Widens the excluded ranges to whole pages, sorts them and merges overlapping or touching ones.
void SortAndMerge(MmapArray<Region>* r) {
  for (Region& x : *r) x = Region{PageDown(x.start), PageUp(x.end)};
  std::sort(r->begin(), r->end(),
            [](const Region& a, const Region& b) { return a.start < b.start; });
  size_t kept = 0;
  for (const Region& x : *r) {
    if (kept > 0 && x.start <= (*r)[kept - 1].end) {
      if (x.end > (*r)[kept - 1].end) (*r)[kept - 1].end = x.end;
    } else {
      (*r)[kept++] = x;
    }
  }
  r->Resize(kept);
}

}  // namespace

bool PrepareAnonymousRoots(AnonymousRoots* a) {
  a->runtime_complete = false;
  a->excluded.Clear();
  // Room for the runtime's mappings as they are now, what this check maps before the stop and
  // some growth meanwhile; the copy in the stopped world never grows the array.
  const size_t room = internal::RuntimeMappingCount() * 2 + 1024;
  if (!a->excluded.ReservePopulated(room) || !a->excluded.Resize(room)) return false;
  // The pagemap entries and the per-page flags (one byte a page) after them.
  return a->residency.ReservePopulated(kResidencyBatch + kResidencyBatch / sizeof(uint64_t)) &&
         a->residency.Resize(kResidencyBatch + kResidencyBatch / sizeof(uint64_t));
}

void CopyRuntimeMappingsStopped(AnonymousRoots* a) {
  static_assert(sizeof(Region) == sizeof(internal::RuntimeMapping));
  const size_t room = a->excluded.size();
  const size_t n = internal::CopyRuntimeMappings(
      reinterpret_cast<internal::RuntimeMapping*>(a->excluded.data()), room);
  a->runtime_complete = n <= room && internal::RuntimeMappingsNotNoted() == 0;
  a->excluded.Resize(n <= room ? n : room);
}

bool AddAnonymousRegions(const ProcMaps& maps, const LoadedModules& modules, AnonymousRoots* a,
                         MmapArray<Region>* out, AnonymousRootsStats* stats) {
  *stats = AnonymousRootsStats{};
  if (!a->runtime_complete) {
    stats->outcome = AnonymousRootsOutcome::kRuntimeUnknown;
    return true;
  }
  for (const Region& s : modules.segments)
    if (!a->excluded.PushBack(s)) {
      stats->outcome = AnonymousRootsOutcome::kOutOfMemory;
      return false;
    }
  SortAndMerge(&a->excluded);
  const Region* excluded = a->excluded.begin();
  const Region* excluded_end = a->excluded.end();
  Residency residency(&a->residency);
  bool ok = true;
  for (size_t i = 0; ok && i < maps.size(); ++i) {
    const MapsLine& m = maps[i];
    if (!IsAnonymousData(m) || TopHoldsThreadControlBlock(m.start, m.limit)) continue;
    // The parts of the line outside every excluded range.
    const Region* x = std::lower_bound(excluded, excluded_end, m.start,
                                       [](const Region& r, uintptr_t v) { return r.end <= v; });
    bool scanned_any = false;
    for (uintptr_t from = m.start; ok && from < m.limit;) {
      uintptr_t to = m.limit;
      if (x != excluded_end && x->start < to) to = x->start > from ? x->start : from;
      if (from < to) {
        ok = residency.ForEachResidentRun(from, to, &stats->skipped_bytes,
                                          [&](uintptr_t s, uintptr_t e) {
                                            stats->bytes += e - s;
                                            scanned_any = true;
                                            return out->PushBack(Region{s, e});
                                          });
      }
      if (x == excluded_end || x->start >= m.limit) break;
      from = x->end;
      ++x;
    }
    if (scanned_any) ++stats->mappings;
  }
  stats->outcome = ok ? AnonymousRootsOutcome::kScanned : AnonymousRootsOutcome::kOutOfMemory;
  return ok;
}

}  // namespace heapkit::check
