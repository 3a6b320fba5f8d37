/* heapkit's <gperftools/malloc_hook_c.h>: the C API of MallocHook (gperftools 2.10).
 *
 * What heapkit calls (alloc/README.md, "MallocHook"):
 *  - New hooks: after every successful allocation (malloc, calloc, realloc when it moves,
 *    memalign, posix_memalign, aligned_alloc, valloc, pvalloc, every operator new and the tc_*
 *    names), on the allocating thread, with the returned pointer and the size asked for. Not
 *    called when the allocation failed.
 *  - Delete hooks: for every free, cfree, realloc that moves or frees, and operator delete
 *    (free(NULL) included, with NULL), on the freeing thread, before the memory can be reused.
 *  - Hooks run with no allocator lock held. They may allocate and free: allocations and frees
 *    made by a hook (on that thread, while it runs) are not reported to the hooks.
 *  - The mmap, munmap, mremap and sbrk hooks are kept and called only by the Invoke functions:
 *    heapkit does not interpose mmap, munmap, mremap or sbrk, and its own mappings are not
 *    reported. MmapReplacement/MunmapReplacement are consulted by MallocHook::UnhookedMMap
 *    and UnhookedMUnmap.
 *  - Each kind holds up to 7 hooks added with Add (an eighth fails: 0) plus the one installed
 *    with the deprecated Set function, which returns the one it replaces.
 */
#ifndef HEAPKIT_GPERFTOOLS_MALLOC_HOOK_C_H_
#define HEAPKIT_GPERFTOOLS_MALLOC_HOOK_C_H_

#include <stddef.h>
#include <sys/types.h>

#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread's stack, innermost first, after skipping this function's own frame and
 * skip_count more (heapkit does not locate the allocator's frames: pass how many frames lie
 * between the hook and the allocation call). Uses the heap profiler's unwinder (libheapkit);
 * returns 0 without it (libheapkit_minimal). */
PERFTOOLS_DLL_DECL int MallocHook_GetCallerStackTrace(void** result, int max_depth, int skip_count);

/* Add and Remove return 1 on success, 0 on failure (list full, hook absent, NULL hook). */
typedef void (*MallocHook_NewHook)(const void* ptr, size_t size);
PERFTOOLS_DLL_DECL int MallocHook_AddNewHook(MallocHook_NewHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveNewHook(MallocHook_NewHook hook);

typedef void (*MallocHook_DeleteHook)(const void* ptr);
PERFTOOLS_DLL_DECL int MallocHook_AddDeleteHook(MallocHook_DeleteHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveDeleteHook(MallocHook_DeleteHook hook);

typedef void (*MallocHook_PreMmapHook)(const void* start, size_t size, int protection, int flags,
                                       int fd, off_t offset);
PERFTOOLS_DLL_DECL int MallocHook_AddPreMmapHook(MallocHook_PreMmapHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemovePreMmapHook(MallocHook_PreMmapHook hook);

typedef void (*MallocHook_MmapHook)(const void* result, const void* start, size_t size,
                                    int protection, int flags, int fd, off_t offset);
PERFTOOLS_DLL_DECL int MallocHook_AddMmapHook(MallocHook_MmapHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveMmapHook(MallocHook_MmapHook hook);

/* Returns non-zero if it performed the mapping (stored in *result). One at a time. */
typedef int (*MallocHook_MmapReplacement)(const void* start, size_t size, int protection, int flags,
                                          int fd, off_t offset, void** result);
PERFTOOLS_DLL_DECL int MallocHook_SetMmapReplacement(MallocHook_MmapReplacement hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveMmapReplacement(MallocHook_MmapReplacement hook);

typedef void (*MallocHook_MunmapHook)(const void* ptr, size_t size);
PERFTOOLS_DLL_DECL int MallocHook_AddMunmapHook(MallocHook_MunmapHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveMunmapHook(MallocHook_MunmapHook hook);

/* Returns non-zero if it performed the unmapping (munmap's answer in *result). One at a time. */
typedef int (*MallocHook_MunmapReplacement)(const void* ptr, size_t size, int* result);
PERFTOOLS_DLL_DECL int MallocHook_SetMunmapReplacement(MallocHook_MunmapReplacement hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveMunmapReplacement(MallocHook_MunmapReplacement hook);

typedef void (*MallocHook_MremapHook)(const void* result, const void* old_addr, size_t old_size,
                                      size_t new_size, int flags, const void* new_addr);
PERFTOOLS_DLL_DECL int MallocHook_AddMremapHook(MallocHook_MremapHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveMremapHook(MallocHook_MremapHook hook);

typedef void (*MallocHook_PreSbrkHook)(ptrdiff_t increment);
PERFTOOLS_DLL_DECL int MallocHook_AddPreSbrkHook(MallocHook_PreSbrkHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemovePreSbrkHook(MallocHook_PreSbrkHook hook);

typedef void (*MallocHook_SbrkHook)(const void* result, ptrdiff_t increment);
PERFTOOLS_DLL_DECL int MallocHook_AddSbrkHook(MallocHook_SbrkHook hook);
PERFTOOLS_DLL_DECL int MallocHook_RemoveSbrkHook(MallocHook_SbrkHook hook);

/* Deprecated: one hook of each kind besides the added ones; returns the previous one. */
PERFTOOLS_DLL_DECL MallocHook_NewHook MallocHook_SetNewHook(MallocHook_NewHook hook);
PERFTOOLS_DLL_DECL MallocHook_DeleteHook MallocHook_SetDeleteHook(MallocHook_DeleteHook hook);
PERFTOOLS_DLL_DECL MallocHook_PreMmapHook MallocHook_SetPreMmapHook(MallocHook_PreMmapHook hook);
PERFTOOLS_DLL_DECL MallocHook_MmapHook MallocHook_SetMmapHook(MallocHook_MmapHook hook);
PERFTOOLS_DLL_DECL MallocHook_MunmapHook MallocHook_SetMunmapHook(MallocHook_MunmapHook hook);
PERFTOOLS_DLL_DECL MallocHook_MremapHook MallocHook_SetMremapHook(MallocHook_MremapHook hook);
PERFTOOLS_DLL_DECL MallocHook_PreSbrkHook MallocHook_SetPreSbrkHook(MallocHook_PreSbrkHook hook);
PERFTOOLS_DLL_DECL MallocHook_SbrkHook MallocHook_SetSbrkHook(MallocHook_SbrkHook hook);

#ifdef __cplusplus
}
#endif

#endif /* HEAPKIT_GPERFTOOLS_MALLOC_HOOK_C_H_ */
