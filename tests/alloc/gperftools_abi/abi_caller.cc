// Compiled against gperftools 2.10's own header (Debian's /usr/include/gperftools, never
// heapkit's) and linked with libheapkit.so: every virtual call goes through the vtable layout
// gperftools' header defines, so a slot out of place calls the wrong method (GetOwnership(p)
// used to return 112 here).
#include <gperftools/malloc_extension.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef HEAPKIT_GPERFTOOLS_MALLOC_EXTENSION_H_
#error "built against heapkit's header; this test needs gperftools' own"
#endif

#include "check.h"

int main() {
  MallocExtension* ext = MallocExtension::instance();
  CHECK(ext != nullptr);
  void* p = std::malloc(100);
  int on_stack = 0;
  CHECK(ext->GetOwnership(p) == MallocExtension::kOwned);
  CHECK(ext->GetOwnership(&on_stack) == MallocExtension::kNotOwned);
  CHECK(ext->GetOwnership(nullptr) == MallocExtension::kNotOwned);
  CHECK(ext->GetAllocatedSize(p) >= 100 && ext->GetAllocatedSize(p) < 256);
  CHECK(ext->GetEstimatedAllocatedSize(100) == ext->GetAllocatedSize(p));
  CHECK(ext->VerifyMallocMemory(p));

  size_t allocated = 0, heap = 0;
  CHECK(ext->GetNumericProperty("generic.current_allocated_bytes", &allocated));
  CHECK(ext->GetNumericProperty("generic.heap_size", &heap));
  CHECK(allocated >= 100 && heap >= allocated);
  size_t unknown = 7;
  CHECK(!ext->GetNumericProperty("no.such.property", &unknown));

  // Fill this thread's cache, then empty it.
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(std::malloc(64));
  for (void* b : blocks) std::free(b);
  const size_t cached = ext->GetThreadCacheSize();
  CHECK(cached >= 64 && cached < (size_t{64} << 20));
  ext->MarkThreadTemporarilyIdle();
  CHECK(ext->GetThreadCacheSize() == 0);

  int period = -1;
  void** traces = ext->ReadStackTraces(&period);
  CHECK(traces == nullptr);
  delete[] traces;
  CHECK(ext->ReadHeapGrowthStackTraces() == nullptr);

  const double rate = ext->GetMemoryReleaseRate();
  ext->SetMemoryReleaseRate(3.5);
  CHECK(ext->GetMemoryReleaseRate() == 3.5);
  ext->SetMemoryReleaseRate(rate);

  // Ranges: address order, no overlap, the block p lies in an in-use range.
  struct Seen {
    uintptr_t last_end = 0;
    bool sorted = true, holds_p = false, types_ok = true;
    size_t in_use = 0;
    uintptr_t p;
  } seen;
  seen.p = reinterpret_cast<uintptr_t>(p);
  ext->Ranges(&seen, [](void* arg, const base::MallocRange* r) {
    auto* s = static_cast<Seen*>(arg);
    s->sorted = s->sorted && r->address >= s->last_end && r->length > 0;
    s->last_end = r->address + r->length;
    s->types_ok = s->types_ok &&
                  (r->type == base::MallocRange::INUSE || r->type == base::MallocRange::FREE ||
                   r->type == base::MallocRange::UNMAPPED) &&
                  r->fraction >= 0 && r->fraction <= 1;
    if (r->type == base::MallocRange::INUSE) {
      s->in_use += r->length;
      if (s->p >= r->address && s->p < r->address + r->length) s->holds_p = r->fraction > 0;
    }
  });
  CHECK(seen.sorted && seen.types_ok && seen.holds_p);
  size_t heap_now = 0;
  CHECK(ext->GetNumericProperty("generic.heap_size", &heap_now));
  CHECK(seen.in_use > 0 && seen.in_use <= heap_now);

  char stats[4096];
  ext->GetStats(stats, sizeof(stats));
  CHECK(std::strstr(stats, "MALLOC:") != nullptr);
  std::vector<MallocExtension::FreeListInfo> lists;
  ext->GetFreeListSizes(&lists);
  CHECK(!lists.empty());
  ext->ReleaseFreeMemory();
  ext->MarkThreadIdle();
  ext->MarkThreadBusy();
  std::free(p);
  if (failures == 0)
    std::printf("PASS: gperftools 2.10's MallocExtension vtable reaches heapkit's methods\n");
  return failures == 0 ? 0 : 1;
}
