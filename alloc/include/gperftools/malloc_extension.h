// heapkit's <gperftools/malloc_extension.h>: source compatible with gperftools 2.10.
//
// Extra interfaces to the allocator: statistics, numeric properties (gperftools' names),
// memory release, and hooks the heap profiler fills in (GetHeapSample, GetHeapGrowthStacks).
#ifndef HEAPKIT_GPERFTOOLS_MALLOC_EXTENSION_H_
#define HEAPKIT_GPERFTOOLS_MALLOC_EXTENSION_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL __attribute__((visibility("default")))
#endif

#ifndef PERFTOOLS_NOTHROW
#define PERFTOOLS_NOTHROW noexcept
#endif

static const int kMallocHistogramSize = 64;

// One implementation-specific system allocator (not used by heapkit; kept for source
// compatibility: SetSystemAllocator is accepted and ignored).
class PERFTOOLS_DLL_DECL SysAllocator {
 public:
  SysAllocator() {}
  virtual ~SysAllocator();
  virtual void* Alloc(size_t size, size_t* actual_size, size_t alignment) = 0;
};

typedef std::string MallocExtensionWriter;

namespace base {
struct MallocRange {
  enum Type { INUSE, FREE, UNMAPPED, UNKNOWN };
  uintptr_t address;
  size_t length;
  Type type;
  double fraction;
};
}  // namespace base

// The virtual methods are declared in gperftools 2.10's order, one for one: programs and
// libraries compiled against gperftools' header call them through this vtable.
class PERFTOOLS_DLL_DECL MallocExtension {
 public:
  virtual ~MallocExtension();

  // Compatibility no-op (the allocator initialises itself on first use).
  static void Initialize();

  virtual bool VerifyAllMemory();
  virtual bool VerifyNewMemory(const void* p);
  virtual bool VerifyArrayNewMemory(const void* p);
  virtual bool VerifyMallocMemory(const void* p);
  virtual bool MallocMemoryStats(int* blocks, size_t* total, int histogram[kMallocHistogramSize]);

  // Human-readable statistics, NUL-terminated and truncated to buffer_length.
  virtual void GetStats(char* buffer, int buffer_length);

  // Heap profile of sampled objects (filled by the heap profiler in libheapkit; empty in the
  // minimal library).
  virtual void GetHeapSample(MallocExtensionWriter* writer);
  virtual void GetHeapGrowthStacks(MallocExtensionWriter* writer);

  typedef void(RangeFunction)(void*, const base::MallocRange*);
  virtual void Ranges(void* arg, RangeFunction func);

  // Properties: generic.current_allocated_bytes, generic.heap_size,
  // generic.total_physical_bytes, tcmalloc.pageheap_free_bytes,
  // tcmalloc.pageheap_unmapped_bytes, tcmalloc.slack_bytes,
  // tcmalloc.max_total_thread_cache_bytes (settable), tcmalloc.current_total_thread_cache_bytes,
  // tcmalloc.central_cache_free_bytes, tcmalloc.transfer_cache_free_bytes,
  // tcmalloc.thread_cache_free_bytes, tcmalloc.aggressive_memory_decommit (settable).
  virtual bool GetNumericProperty(const char* property, size_t* value);
  virtual bool SetNumericProperty(const char* property, size_t value);

  virtual void MarkThreadIdle();
  virtual void MarkThreadBusy();

  virtual SysAllocator* GetSystemAllocator();
  virtual void SetSystemAllocator(SysAllocator* a);

  virtual void ReleaseToSystem(size_t num_bytes);
  virtual void ReleaseFreeMemory();
  virtual void SetMemoryReleaseRate(double rate);
  virtual double GetMemoryReleaseRate();

  virtual size_t GetEstimatedAllocatedSize(size_t size);
  virtual size_t GetAllocatedSize(const void* p);

  enum Ownership { kUnknownOwnership = 0, kOwned, kNotOwned };
  virtual Ownership GetOwnership(const void* p);

  struct FreeListInfo {
    size_t min_object_size;
    size_t max_object_size;
    size_t total_bytes_free;
    const char* type;
  };
  virtual void GetFreeListSizes(std::vector<FreeListInfo>* v);

  // gperftools' internal stack-trace readers (deprecated there); heapkit returns NULL ("no
  // results", as their contract allows): use GetHeapSample / GetHeapGrowthStacks.
  virtual void** ReadStackTraces(int* sample_period);
  virtual void** ReadHeapGrowthStackTraces();

  // Bytes cached by the calling thread's cache.
  virtual size_t GetThreadCacheSize();

  // Like MarkThreadIdle.
  virtual void MarkThreadTemporarilyIdle();

  static MallocExtension* instance();
  static void Register(MallocExtension* implementation);
};

extern "C" {
// The usable size malloc(size) would return (jemalloc/tcmalloc extension).
PERFTOOLS_DLL_DECL size_t nallocx(size_t size, int flags) PERFTOOLS_NOTHROW;
}

#endif  // HEAPKIT_GPERFTOOLS_MALLOC_EXTENSION_H_
