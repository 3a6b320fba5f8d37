// heapkit's <gperftools/malloc_hook.h>: source and binary compatible with gperftools 2.10.
//
// Callbacks on allocation events; what heapkit calls when is stated in
// <gperftools/malloc_hook_c.h>. The Invoke functions call the hooks of their kind (and are how the
// mmap, munmap, mremap and sbrk hooks are reached: heapkit does not interpose those calls).
#ifndef HEAPKIT_GPERFTOOLS_MALLOC_HOOK_H_
#define HEAPKIT_GPERFTOOLS_MALLOC_HOOK_H_

#include <stddef.h>
#include <sys/types.h>

#include <gperftools/malloc_hook_c.h>

class PERFTOOLS_DLL_DECL MallocHook {
 public:
  typedef MallocHook_NewHook NewHook;
  static bool AddNewHook(NewHook hook) { return MallocHook_AddNewHook(hook); }
  static bool RemoveNewHook(NewHook hook) { return MallocHook_RemoveNewHook(hook); }
  static void InvokeNewHook(const void* p, size_t s) { InvokeNewHookSlow(p, s); }

  typedef MallocHook_DeleteHook DeleteHook;
  static bool AddDeleteHook(DeleteHook hook) { return MallocHook_AddDeleteHook(hook); }
  static bool RemoveDeleteHook(DeleteHook hook) { return MallocHook_RemoveDeleteHook(hook); }
  static void InvokeDeleteHook(const void* p) { InvokeDeleteHookSlow(p); }

  typedef MallocHook_PreMmapHook PreMmapHook;
  static bool AddPreMmapHook(PreMmapHook hook) { return MallocHook_AddPreMmapHook(hook); }
  static bool RemovePreMmapHook(PreMmapHook hook) { return MallocHook_RemovePreMmapHook(hook); }
  static void InvokePreMmapHook(const void* start, size_t size, int protection, int flags, int fd,
                                off_t offset) {
    InvokePreMmapHookSlow(start, size, protection, flags, fd, offset);
  }

  typedef MallocHook_MmapReplacement MmapReplacement;
  static bool SetMmapReplacement(MmapReplacement hook) {
    return MallocHook_SetMmapReplacement(hook);
  }
  static bool RemoveMmapReplacement(MmapReplacement hook) {
    return MallocHook_RemoveMmapReplacement(hook);
  }
  static bool InvokeMmapReplacement(const void* start, size_t size, int protection, int flags,
                                    int fd, off_t offset, void** result) {
    return InvokeMmapReplacementSlow(start, size, protection, flags, fd, offset, result);
  }

  typedef MallocHook_MmapHook MmapHook;
  static bool AddMmapHook(MmapHook hook) { return MallocHook_AddMmapHook(hook); }
  static bool RemoveMmapHook(MmapHook hook) { return MallocHook_RemoveMmapHook(hook); }
  static void InvokeMmapHook(const void* result, const void* start, size_t size, int protection,
                             int flags, int fd, off_t offset) {
    InvokeMmapHookSlow(result, start, size, protection, flags, fd, offset);
  }

  typedef MallocHook_MunmapReplacement MunmapReplacement;
  static bool SetMunmapReplacement(MunmapReplacement hook) {
    return MallocHook_SetMunmapReplacement(hook);
  }
  static bool RemoveMunmapReplacement(MunmapReplacement hook) {
    return MallocHook_RemoveMunmapReplacement(hook);
  }
  static bool InvokeMunmapReplacement(const void* p, size_t size, int* result) {
    return InvokeMunmapReplacementSlow(p, size, result);
  }

  typedef MallocHook_MunmapHook MunmapHook;
  static bool AddMunmapHook(MunmapHook hook) { return MallocHook_AddMunmapHook(hook); }
  static bool RemoveMunmapHook(MunmapHook hook) { return MallocHook_RemoveMunmapHook(hook); }
  static void InvokeMunmapHook(const void* p, size_t size) { InvokeMunmapHookSlow(p, size); }

  typedef MallocHook_MremapHook MremapHook;
  static bool AddMremapHook(MremapHook hook) { return MallocHook_AddMremapHook(hook); }
  static bool RemoveMremapHook(MremapHook hook) { return MallocHook_RemoveMremapHook(hook); }
  static void InvokeMremapHook(const void* result, const void* old_addr, size_t old_size,
                               size_t new_size, int flags, const void* new_addr) {
    InvokeMremapHookSlow(result, old_addr, old_size, new_size, flags, new_addr);
  }

  typedef MallocHook_PreSbrkHook PreSbrkHook;
  static bool AddPreSbrkHook(PreSbrkHook hook) { return MallocHook_AddPreSbrkHook(hook); }
  static bool RemovePreSbrkHook(PreSbrkHook hook) { return MallocHook_RemovePreSbrkHook(hook); }
  static void InvokePreSbrkHook(ptrdiff_t increment) { InvokePreSbrkHookSlow(increment); }

  typedef MallocHook_SbrkHook SbrkHook;
  static bool AddSbrkHook(SbrkHook hook) { return MallocHook_AddSbrkHook(hook); }
  static bool RemoveSbrkHook(SbrkHook hook) { return MallocHook_RemoveSbrkHook(hook); }
  static void InvokeSbrkHook(const void* result, ptrdiff_t increment) {
    InvokeSbrkHookSlow(result, increment);
  }

  static int GetCallerStackTrace(void** result, int max_depth, int skip_count) {
    return MallocHook_GetCallerStackTrace(result, max_depth, skip_count);
  }

  // mmap and munmap without the hooks (they still honour the Mmap/MunmapReplacement).
  static void* UnhookedMMap(void* start, size_t length, int prot, int flags, int fd, off_t offset);
  static int UnhookedMUnmap(void* start, size_t length);

  // Deprecated: the single hook of each kind installed with Set (which returns the previous).
  static NewHook GetNewHook();
  static NewHook SetNewHook(NewHook hook) { return MallocHook_SetNewHook(hook); }
  static DeleteHook GetDeleteHook();
  static DeleteHook SetDeleteHook(DeleteHook hook) { return MallocHook_SetDeleteHook(hook); }
  static PreMmapHook GetPreMmapHook();
  static PreMmapHook SetPreMmapHook(PreMmapHook hook) { return MallocHook_SetPreMmapHook(hook); }
  static MmapHook GetMmapHook();
  static MmapHook SetMmapHook(MmapHook hook) { return MallocHook_SetMmapHook(hook); }
  static MunmapHook GetMunmapHook();
  static MunmapHook SetMunmapHook(MunmapHook hook) { return MallocHook_SetMunmapHook(hook); }
  static MremapHook GetMremapHook();
  static MremapHook SetMremapHook(MremapHook hook) { return MallocHook_SetMremapHook(hook); }
  static PreSbrkHook GetPreSbrkHook();
  static PreSbrkHook SetPreSbrkHook(PreSbrkHook hook) { return MallocHook_SetPreSbrkHook(hook); }
  static SbrkHook GetSbrkHook();
  static SbrkHook SetSbrkHook(SbrkHook hook) { return MallocHook_SetSbrkHook(hook); }

 private:
  // gperftools' exported names; its header's inline Invoke functions call these.
  static void InvokeNewHookSlow(const void* p, size_t s);
  static void InvokeDeleteHookSlow(const void* p);
  static void InvokePreMmapHookSlow(const void* start, size_t size, int protection, int flags,
                                    int fd, off_t offset);
  static void InvokeMmapHookSlow(const void* result, const void* start, size_t size, int protection,
                                 int flags, int fd, off_t offset);
  static bool InvokeMmapReplacementSlow(const void* start, size_t size, int protection, int flags,
                                        int fd, off_t offset, void** result);
  static void InvokeMunmapHookSlow(const void* p, size_t size);
  static bool InvokeMunmapReplacementSlow(const void* p, size_t size, int* result);
  static void InvokeMremapHookSlow(const void* result, const void* old_addr, size_t old_size,
                                   size_t new_size, int flags, const void* new_addr);
  static void InvokePreSbrkHookSlow(ptrdiff_t increment);
  static void InvokeSbrkHookSlow(const void* result, ptrdiff_t increment);
};

#endif  // HEAPKIT_GPERFTOOLS_MALLOC_HOOK_H_
