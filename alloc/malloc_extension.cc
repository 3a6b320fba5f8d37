// MallocExtension (gperftools API) and its C wrappers, implemented on stats.h / observer_hooks.h.
#include "gperftools/malloc_extension.h"

#include <cstring>

#include "alloc/allocator.h"
#include "alloc/heap_ranges.h"
#include "alloc/internal/cxx_runtime_weak.h"
#include "alloc/observer_hooks.h"
#include "alloc/stats.h"
#include "gperftools/malloc_extension_c.h"

namespace {

using heapkit::alloc::AllocatorStats;

void AppendToString(void* sink, const char* data, size_t length) {
  static_cast<std::string*>(sink)->append(data, length);
}

bool StatProperty(const char* name, size_t* value) {
  AllocatorStats s;
  heapkit::alloc::GetAllocatorStats(&s);
  struct Entry {
    const char* name;
    size_t value;
  };
  const Entry entries[] = {
      {"generic.current_allocated_bytes", s.in_use_bytes},
      {"generic.heap_size", s.system_bytes},
      {"generic.total_physical_bytes",
       s.system_bytes - s.pageheap_unmapped_bytes + s.metadata_bytes},
      {"tcmalloc.pageheap_free_bytes", s.pageheap_free_bytes},
      {"tcmalloc.pageheap_unmapped_bytes", s.pageheap_unmapped_bytes},
      {"tcmalloc.slack_bytes", s.pageheap_free_bytes + s.pageheap_unmapped_bytes},
      {"tcmalloc.max_total_thread_cache_bytes", s.max_total_thread_cache_bytes},
      {"tcmalloc.current_total_thread_cache_bytes", s.thread_cache_free_bytes},
      {"tcmalloc.central_cache_free_bytes", s.central_free_bytes},
      {"tcmalloc.transfer_cache_free_bytes", s.transfer_free_bytes},
      {"tcmalloc.thread_cache_free_bytes", s.thread_cache_free_bytes},
      {"tcmalloc.metadata_bytes", s.metadata_bytes},
      {"heapkit.central_lock_acquisitions", static_cast<size_t>(s.central_lock_acquisitions)},
      {"heapkit.central_lock_contended", static_cast<size_t>(s.central_lock_contended)},
      {"heapkit.central_foreign_batches", static_cast<size_t>(s.central_foreign_batches)},
  };
  for (const Entry& e : entries) {
    if (strcmp(e.name, name) == 0) {
      *value = e.value;
      return true;
    }
  }
  return false;
}

MallocExtension* current_instance = nullptr;

}  // namespace

SysAllocator::~SysAllocator() {}
// Runs at every exit (default_instance): with the start-up code.
HEAPKIT_ALWAYS_RUN_CODE MallocExtension::~MallocExtension() {}

void MallocExtension::Initialize() { heapkit::alloc::EnsureInit(); }
bool MallocExtension::VerifyAllMemory() { return true; }
bool MallocExtension::VerifyNewMemory(const void* p) {
  return p == nullptr || heapkit::alloc::Owns(p);
}
bool MallocExtension::VerifyArrayNewMemory(const void* p) { return VerifyNewMemory(p); }
bool MallocExtension::VerifyMallocMemory(const void* p) { return VerifyNewMemory(p); }
bool MallocExtension::MallocMemoryStats(int*, size_t*, int*) { return false; }

void MallocExtension::GetStats(char* buffer, int buffer_length) {
  if (buffer == nullptr || buffer_length <= 0) return;
  heapkit::alloc::FormatStats(buffer, static_cast<size_t>(buffer_length));
}

void MallocExtension::GetHeapSample(MallocExtensionWriter* writer) {
  const heapkit::alloc::HeapSampleProvider* p = heapkit::alloc::GetHeapSampleProvider();
  if (p != nullptr && p->heap_sample != nullptr) p->heap_sample(AppendToString, writer);
}

void MallocExtension::GetHeapGrowthStacks(MallocExtensionWriter* writer) {
  const heapkit::alloc::HeapSampleProvider* p = heapkit::alloc::GetHeapSampleProvider();
  if (p != nullptr && p->heap_growth_stacks != nullptr) {
    p->heap_growth_stacks(AppendToString, writer);
  }
}

void MallocExtension::Ranges(void* arg, RangeFunction func) {
  struct Forward {
    void* arg;
    RangeFunction* func;
  } forward{arg, func};
  heapkit::alloc::ForEachHeapRange(
      [](void* ctx, const heapkit::alloc::HeapRange& r) {
        auto* f = static_cast<Forward*>(ctx);
        base::MallocRange range;
        range.address = r.address;
        range.length = r.length;
        range.type = r.type == heapkit::alloc::HeapRange::kInUse  ? base::MallocRange::INUSE
                     : r.type == heapkit::alloc::HeapRange::kFree ? base::MallocRange::FREE
                                                                  : base::MallocRange::UNMAPPED;
        range.fraction = r.fraction;
        f->func(f->arg, &range);
      },
      &forward);
}

bool MallocExtension::GetNumericProperty(const char* property, size_t* value) {
  if (property == nullptr || value == nullptr) return false;
  if (strcmp(property, "tcmalloc.aggressive_memory_decommit") == 0) {
    *value = heapkit::alloc::GetAggressiveDecommit() ? 1 : 0;
    return true;
  }
  return StatProperty(property, value);
}

bool MallocExtension::SetNumericProperty(const char* property, size_t value) {
  if (property == nullptr) return false;
  if (strcmp(property, "tcmalloc.max_total_thread_cache_bytes") == 0) {
    heapkit::alloc::SetMaxTotalThreadCacheBytes(value);
    return true;
  }
  if (strcmp(property, "tcmalloc.aggressive_memory_decommit") == 0) {
    heapkit::alloc::SetAggressiveDecommit(value != 0);
    return true;
  }
  return false;
}

void MallocExtension::MarkThreadIdle() { heapkit::alloc::MarkThreadIdle(); }
void MallocExtension::MarkThreadBusy() {}
void MallocExtension::MarkThreadTemporarilyIdle() { heapkit::alloc::MarkThreadIdle(); }
void** MallocExtension::ReadStackTraces(int* sample_period) {
  if (sample_period != nullptr) *sample_period = 0;
  return nullptr;
}
void** MallocExtension::ReadHeapGrowthStackTraces() { return nullptr; }
size_t MallocExtension::GetThreadCacheSize() { return heapkit::alloc::CurrentThreadCacheBytes(); }
SysAllocator* MallocExtension::GetSystemAllocator() { return nullptr; }
void MallocExtension::SetSystemAllocator(SysAllocator*) {}
void MallocExtension::ReleaseToSystem(size_t num_bytes) {
  heapkit::alloc::ReleaseToSystem(num_bytes);
}
void MallocExtension::ReleaseFreeMemory() { heapkit::alloc::ReleaseFreeMemory(); }
void MallocExtension::SetMemoryReleaseRate(double rate) { heapkit::alloc::SetReleaseRate(rate); }
double MallocExtension::GetMemoryReleaseRate() { return heapkit::alloc::GetReleaseRate(); }
size_t MallocExtension::GetEstimatedAllocatedSize(size_t size) {
  return heapkit::alloc::EstimatedSize(size, 0);
}
size_t MallocExtension::GetAllocatedSize(const void* p) { return heapkit::alloc::UsableSize(p); }
MallocExtension::Ownership MallocExtension::GetOwnership(const void* p) {
  if (p == nullptr) return kNotOwned;  // as gperftools: NULL is never a heap object
  return heapkit::alloc::Owns(p) ? kOwned : kNotOwned;
}

void MallocExtension::GetFreeListSizes(std::vector<FreeListInfo>* v) {
  if (v == nullptr) return;
  v->clear();
  AllocatorStats s;
  heapkit::alloc::GetAllocatorStats(&s);
  v->push_back({0, 256 * 1024, s.central_free_bytes, "tcmalloc.central"});
  v->push_back({0, 256 * 1024, s.transfer_free_bytes, "tcmalloc.transfer"});
  v->push_back({0, 256 * 1024, s.thread_cache_free_bytes, "tcmalloc.thread"});
  v->push_back({256 * 1024, SIZE_MAX, s.pageheap_free_bytes, "tcmalloc.page"});
  v->push_back({256 * 1024, SIZE_MAX, s.pageheap_unmapped_bytes, "tcmalloc.page_returned"});
}

namespace {
// Constant-initialized (the constructor only sets the vtable pointer): no initialization guard,
// which would need the C++ runtime, and usable from C before any constructor has run.
constinit MallocExtension default_instance;
}  // namespace

MallocExtension* MallocExtension::instance() {
  MallocExtension* inst = __atomic_load_n(&current_instance, __ATOMIC_ACQUIRE);
  return inst != nullptr ? inst : &default_instance;
}

void MallocExtension::Register(MallocExtension* implementation) {
  __atomic_store_n(&current_instance, implementation, __ATOMIC_RELEASE);
}

extern "C" {

PERFTOOLS_DLL_DECL size_t nallocx(size_t size, int flags) noexcept {
  // MALLOCX_LG_ALIGN(la) is the low 6 bits: alignment 1 << la.
  size_t align = (flags & 0x3f) != 0 ? size_t{1} << (flags & 0x3f) : 0;
  return heapkit::alloc::EstimatedSize(size, align);
}
PERFTOOLS_DLL_DECL size_t tc_nallocx(size_t size, int flags) noexcept {
  return nallocx(size, flags);
}

int MallocExtension_VerifyAllMemory(void) { return MallocExtension::instance()->VerifyAllMemory(); }
int MallocExtension_VerifyNewMemory(const void* p) {
  return MallocExtension::instance()->VerifyNewMemory(p);
}
int MallocExtension_VerifyArrayNewMemory(const void* p) {
  return MallocExtension::instance()->VerifyArrayNewMemory(p);
}
int MallocExtension_VerifyMallocMemory(const void* p) {
  return MallocExtension::instance()->VerifyMallocMemory(p);
}
int MallocExtension_MallocMemoryStats(int* blocks, size_t* total,
                                      int histogram[kMallocExtensionHistogramSize]) {
  return MallocExtension::instance()->MallocMemoryStats(blocks, total, histogram);
}
void MallocExtension_GetStats(char* buffer, int buffer_length) {
  MallocExtension::instance()->GetStats(buffer, buffer_length);
}
int MallocExtension_GetNumericProperty(const char* property, size_t* value) {
  return MallocExtension::instance()->GetNumericProperty(property, value);
}
int MallocExtension_SetNumericProperty(const char* property, size_t value) {
  return MallocExtension::instance()->SetNumericProperty(property, value);
}
void MallocExtension_MarkThreadIdle(void) { MallocExtension::instance()->MarkThreadIdle(); }
void MallocExtension_MarkThreadBusy(void) { MallocExtension::instance()->MarkThreadBusy(); }
void MallocExtension_ReleaseToSystem(size_t num_bytes) {
  MallocExtension::instance()->ReleaseToSystem(num_bytes);
}
void MallocExtension_ReleaseFreeMemory(void) { MallocExtension::instance()->ReleaseFreeMemory(); }
void MallocExtension_SetMemoryReleaseRate(double rate) {
  MallocExtension::instance()->SetMemoryReleaseRate(rate);
}
double MallocExtension_GetMemoryReleaseRate(void) {
  return MallocExtension::instance()->GetMemoryReleaseRate();
}
size_t MallocExtension_GetEstimatedAllocatedSize(size_t size) {
  return MallocExtension::instance()->GetEstimatedAllocatedSize(size);
}
size_t MallocExtension_GetAllocatedSize(const void* p) {
  return MallocExtension::instance()->GetAllocatedSize(p);
}
size_t MallocExtension_GetThreadCacheSize(void) {
  return MallocExtension::instance()->GetThreadCacheSize();
}
void MallocExtension_MarkThreadTemporarilyIdle(void) {
  MallocExtension::instance()->MarkThreadTemporarilyIdle();
}
MallocExtension_Ownership MallocExtension_GetOwnership(const void* p) {
  return static_cast<MallocExtension_Ownership>(MallocExtension::instance()->GetOwnership(p));
}

}  // extern "C"
