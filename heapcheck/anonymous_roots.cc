#include "heapcheck/anonymous_roots.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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
  // memcmp, not string_view::starts_with: at -O0 that calls substr, which may throw, and the
  // runtime links no C++ library.
  constexpr char kNamed[] = "[anon:";
  return m.path.empty() || m.path == "[heap]" ||
         (m.path.size() >= sizeof kNamed - 1 &&
          memcmp(m.path.data(), kNamed, sizeof kNamed - 1) == 0);
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
  if (!a->runtime_now.ReservePopulated(room) || !a->runtime_now.Resize(room)) return false;
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

namespace {

// Appends to out the parts of `r` outside the sorted, disjoint ranges [x, x_end).
bool AppendOutside(Region r, const Region* x, const Region* x_end, MmapArray<Region>* out) {
  x = std::lower_bound(x, x_end, r.start, [](const Region& e, uintptr_t v) { return e.end <= v; });
  for (uintptr_t from = r.start; from < r.end; ++x) {
    const uintptr_t to = x != x_end && x->start < r.end ? std::max(x->start, from) : r.end;
    if (from < to && !out->PushBack(Region{from, to})) return false;
    if (x == x_end || x->start >= r.end) break;
    from = x->end;
  }
  return true;
}

// The candidate regions [first, end) of out, less what the runtime has mapped NOW. The check
// itself maps memory after the maps were read (its arrays grow), and such a mapping may land
// in a range the maps showed as a mapping the check has since unmapped: not in the first copy
// of the runtime's mappings, resident again, and holding the check's own data. The flood
// follows at once and maps nothing inside these regions (what it maps lands where nothing is
// mapped now, and these regions are). False if the runtime's mappings could not all be copied.
bool LeaveOutRuntimeMappingsNow(AnonymousRoots* a, MmapArray<Region>* out, size_t first) {
  const size_t room = a->runtime_now.size();
  const size_t n = internal::CopyRuntimeMappings(
      reinterpret_cast<internal::RuntimeMapping*>(a->runtime_now.data()), room);
  if (n > room) return false;
  a->runtime_now.Resize(n);
  SortAndMerge(&a->runtime_now);
  const size_t candidates = out->size();
  for (size_t i = first; i < candidates; ++i)
    if (!AppendOutside((*out)[i], a->runtime_now.begin(), a->runtime_now.end(), out)) return false;
  const size_t kept = out->size() - candidates;
  std::memmove(out->data() + first, out->data() + candidates, kept * sizeof(Region));
  out->Resize(first + kept);
  return true;
}

}  // namespace

bool AddAnonymousRegions(const ProcMaps& maps, const LoadedModules& modules, AnonymousRoots* a,
                         MmapArray<Region>* out, AnonymousRootsStats* stats) {
  *stats = AnonymousRootsStats{};
  stats->outcome = AnonymousRootsOutcome::kOutOfMemory;
  if (!a->runtime_complete) {
    stats->outcome = AnonymousRootsOutcome::kRuntimeUnknown;
    return true;
  }
  for (const Region& s : modules.segments)
    if (!a->excluded.PushBack(s)) return false;
  SortAndMerge(&a->excluded);
  const size_t first = out->size();
  Residency residency(&a->residency);
  const auto add_run = [&](uintptr_t s, uintptr_t e) { return out->PushBack(Region{s, e}); };
  uint64_t absent = 0;
  for (size_t i = 0; i < maps.size(); ++i) {
    const MapsLine& m = maps[i];
    if (!IsAnonymousData(m)) continue;
    // A thread stack? Only the top's resident pages are read: a page the check unmapped since
    // the maps were read is not read.
    bool stack = false;
    const uintptr_t top = m.limit - m.start > 3 * kPage ? m.limit - 3 * kPage : m.start;
    uint64_t ignored = 0;
    residency.ForEachResidentRun(top, m.limit, &ignored, [&](uintptr_t s, uintptr_t e) {
      if (e == m.limit) stack = TopHoldsThreadControlBlock(s, e);
      return true;
    });
    if (stack) continue;
    // The resident pages of the parts of the line outside every excluded range.
    const size_t before = out->size();
    if (!AppendOutside(Region{m.start, m.limit}, a->excluded.begin(), a->excluded.end(), out))
      return false;
    const size_t parts = out->size() - before;
    for (size_t p = 0; p < parts; ++p) {
      const Region part = (*out)[before + p];
      if (!residency.ForEachResidentRun(part.start, part.end, &absent, add_run)) return false;
    }
    // The parts themselves go; their resident runs stay.
    std::memmove(out->data() + before, out->data() + before + parts,
                 (out->size() - before - parts) * sizeof(Region));
    out->Resize(out->size() - parts);
  }
  if (!LeaveOutRuntimeMappingsNow(a, out, first)) {
    out->Resize(first);
    stats->outcome = AnonymousRootsOutcome::kRuntimeUnknown;
    return true;
  }
  const MapsLine* line = nullptr;
  for (size_t i = first; i < out->size(); ++i) {
    const Region& r = (*out)[i];
    stats->bytes += r.end - r.start;
    const MapsLine* holder = maps.Find(r.start);
    if (holder != line) ++stats->mappings;
    line = holder;
  }
  stats->skipped_bytes = absent;
  stats->outcome = AnonymousRootsOutcome::kScanned;
  return true;
}

}  // namespace heapkit::check
