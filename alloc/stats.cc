#include "alloc/stats.h"

#include "alloc/global_state.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/log.h"
#include "alloc/internal/system_memory.h"
#include "alloc/memory_residency.h"
#include "alloc/span.h"

namespace heapkit::alloc {

void GetAllocatorStats(AllocatorStats* s) {
  *s = AllocatorStats{};
  EnsureInit();
  for (int c = 1; c < g_state.sizemap.num_classes(); ++c) {
    CentralFreeList& cl = g_state.central[c];
    const size_t size = g_state.sizemap.ClassSize(static_cast<uint32_t>(c));
    s->central_free_bytes += cl.FreeObjectsInSpans() * size;
    s->transfer_free_bytes += cl.TransferObjects() * size;
    s->span_tail_bytes += cl.SpanTailBytes();
    const CentralFreeList::Counters k = cl.GetCounters();
    s->central_lock_acquisitions += k.lock_acquisitions;
    s->central_lock_contended += k.lock_contended;
    s->central_foreign_batches += k.foreign_batches;
  }
  s->thread_cache_free_bytes = g_state.registry.TotalCachedBytes();
  s->num_thread_caches = g_state.registry.NumCaches();
  s->max_total_thread_cache_bytes = g_state.registry.max_total();
  PageHeapStats ph = g_state.pageheap.Stats();
  s->system_bytes = ph.system_bytes;
  s->pageheap_free_bytes = ph.free_bytes;
  s->pageheap_unmapped_bytes = ph.unmapped_bytes;
  s->spans_in_use = ph.in_use_spans;
  s->heap_grows = ph.system_allocs;
  s->metadata_bytes = internal::ArenaSystemBytes() + g_state.pagemap.metadata_bytes();
  const size_t not_app = s->pageheap_free_bytes + s->pageheap_unmapped_bytes +
                         s->central_free_bytes + s->transfer_free_bytes +
                         s->thread_cache_free_bytes + s->span_tail_bytes;
  s->in_use_bytes = s->system_bytes > not_app ? s->system_bytes - not_app : 0;
}

size_t FormatStats(char* buffer, size_t size) {
  AllocatorStats s;
  GetAllocatorStats(&s);
  size_t len = 0;
  char dummy[1];
  auto put = [&](const char* label, size_t bytes) {
    char* out = len < size ? buffer + len : dummy;
    size_t room = len < size ? size - len : 1;
    // "MALLOC: <bytes> (<MiB> MiB) <label>": MiB with one decimal, printed with integers.
    size_t tenth_mib = (bytes * 10 + (1 << 19)) >> 20;
    len += internal::FormatTo(out, room, "MALLOC: %12zu (%6zu.%zu MiB) %s\n", bytes, tenth_mib / 10,
                              tenth_mib % 10, label);
  };
  auto text = [&](const char* t) {
    char* out = len < size ? buffer + len : dummy;
    size_t room = len < size ? size - len : 1;
    len += internal::FormatTo(out, room, "%s", t);
  };
  // The tier lines count address space; the residency lines below say how much of it is memory
  // (memory_residency.h). Metadata is counted by what it touched: a page-map leaf reserves
  // 16 MiB of address space and uses 16 bytes per heap page.
  MemoryResidency m;
  MeasureMemoryResidency(&m);
  const Residency heap = m.Heap();
  const Residency metadata = m.Metadata();
  const size_t metadata_used = metadata.resident + metadata.swapped;
  const size_t actual = heap.resident + heap.swapped + metadata_used;
  const size_t never_touched =
      m.heap_in_use.untouched() + m.heap_free.untouched() + metadata.untouched();
  text("------------------------------------------------\n");
  put("Bytes in use by application", s.in_use_bytes);
  put("Bytes in page heap freelist", s.pageheap_free_bytes);
  put("Bytes in central cache freelist", s.central_free_bytes);
  put("Bytes in transfer cache freelist", s.transfer_free_bytes);
  put("Bytes in thread cache freelists", s.thread_cache_free_bytes);
  put("Bytes in span tails (unusable)", s.span_tail_bytes);
  put("Bytes in malloc metadata (touched)", metadata_used);
  text("MALLOC:   ------------\n");
  put("Actual memory used (physical + swap)", actual);
  put("Bytes mapped but never touched (no memory)", never_touched);
  put("Bytes released to OS (aka unmapped)", s.pageheap_unmapped_bytes);
  text("MALLOC:   ------------\n");
  put("Virtual address space used", s.system_bytes + s.metadata_bytes);
  text("MALLOC:\n");
  put("Resident in RAM (part of VmRSS): heap", heap.resident);
  put("Resident in RAM (part of VmRSS): metadata", metadata.resident);
  put(m.knows_swap ? "Swapped out" : "Swapped out (unknown: no /proc/self/pagemap)",
      heap.swapped + metadata.swapped);
  put("Metadata address space reserved (page map, arena)", s.metadata_bytes);
  text("MALLOC:\n");
  char* out = len < size ? buffer + len : dummy;
  size_t room = len < size ? size - len : 1;
  len += internal::FormatTo(out, room,
                            "MALLOC:   %12zu              Spans in use\n"
                            "MALLOC:   %12zu              Thread heaps in use\n"
                            "MALLOC:   %12zu              Tcmalloc page size\n"
                            "MALLOC:   %12llu              Central lock acquisitions (%llu "
                            "contended)\n"
                            "------------------------------------------------\n"
                            "Call ReleaseFreeMemory() to release freelist memory to the OS "
                            "(via madvise()).\n"
                            "Bytes released to the OS take up virtual address space but no "
                            "physical memory.\n"
                            "The tier lines count address space: the never-touched bytes "
                            "among them hold no memory.\n",
                            s.spans_in_use, s.num_thread_caches, kPageSize,
                            static_cast<unsigned long long>(s.central_lock_acquisitions),
                            static_cast<unsigned long long>(s.central_lock_contended));
  if (size > 0) buffer[len < size ? len : size - 1] = '\0';
  return len;
}

void ReleaseFreeMemory() {
  EnsureInit();
  ThreadCache* tc = tls_cache;
  if (tc != &g_empty_cache) tc->ReleaseAll();
  g_state.pageheap.ReleaseAtLeastNPages(static_cast<Length>(-1));
}

void ReleaseTransferCaches() {
  EnsureInit();
  for (int c = 1; c < g_state.sizemap.num_classes(); ++c) g_state.central[c].ReleaseTransferCache();
}

size_t ReleaseToSystem(size_t bytes) {
  EnsureInit();
  return g_state.pageheap.ReleaseAtLeastNPages(PagesFor(bytes)) << kPageShift;
}

void SetReleaseRate(double rate) {
  EnsureInit();
  g_state.pageheap.SetReleaseRate(rate);
}

double GetReleaseRate() {
  EnsureInit();
  return g_state.pageheap.release_rate();
}

void SetMaxTotalThreadCacheBytes(size_t bytes) {
  EnsureInit();
  g_state.registry.SetMaxTotal(bytes);
}

void SetAggressiveDecommit(bool on) {
  EnsureInit();
  g_state.pageheap.set_aggressive_decommit(on);
  if (on) g_state.pageheap.ReleaseAtLeastNPages(static_cast<Length>(-1));
}

bool GetAggressiveDecommit() {
  EnsureInit();
  return g_state.pageheap.aggressive_decommit();
}

size_t CurrentThreadCacheBytes() { return tls_cache->size(); }

}  // namespace heapkit::alloc
