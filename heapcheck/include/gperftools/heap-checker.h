// heapkit's leak checker API, source compatible with gperftools 2.10 <gperftools/heap-checker.h>.
//
// Whole-program checking is driven by the HEAPCHECK environment variable (see
// heapcheck/README.md): with HEAPCHECK=normal the program is checked at exit and exits with
// status 1 (HEAP_CHECK_ERROR_EXIT_CODE) if it leaked. Named checks compare a region of code:
//
//   HeapLeakChecker checker("foo");
//   Foo();
//   if (!checker.NoLeaks()) assert(NULL == "heap memory leak");
//
// reports objects allocated after `checker` was constructed that are unreachable at NoLeaks().
#ifndef HEAPKIT_GPERFTOOLS_HEAP_CHECKER_H_
#define HEAPKIT_GPERFTOOLS_HEAP_CHECKER_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vector>  // gperftools' header provided it; kept for source compatibility

#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL __attribute__((visibility("default")))
#endif

// What HeapLeakChecker::IgnoreObject(ptr) does (defined with the checker's ignore list).
extern "C" PERFTOOLS_DLL_DECL void HeapLeakChecker_IgnoreObject(const void* ptr);

class PERFTOOLS_DLL_DECL HeapLeakChecker {
 public:
  // True if HEAPCHECK is set to a valid mode (any check, whole-program or named, may run).
  static bool IsActive();

  // The whole-program checker ("_main_"), or NULL if there is none (HEAPCHECK unset, "local",
  // or the global check was cancelled).
  static HeapLeakChecker* GlobalChecker();

  // Runs the whole-program check now (report included); true if no leaks. Does not exit.
  static bool NoGlobalLeaks();

  // Cancels the at-exit whole-program check.
  static void CancelGlobalCheck();

  // Starts a named check: objects live now are never reported by this checker.
  explicit HeapLeakChecker(const char* name);
  ~HeapLeakChecker();

  // Checks for objects allocated since construction that are unreachable now; reports them
  // (on stderr, plus a <name>-end.heap profile) and returns false if there are any.
  // The other five run the same check (gperftools' variants differed in what they compared
  // and how much they reported).
  bool NoLeaks();
  bool QuickNoLeaks();
  bool BriefNoLeaks();
  bool SameHeap();
  bool QuickSameHeap();
  bool BriefSameHeap();

  // Results of the last NoLeaks()/SameHeap() (0 before any check).
  ssize_t BytesLeaked() const;
  ssize_t ObjectsLeaked() const;

  // While a Disabler lives on a thread, that thread's allocations are not recorded: they and
  // everything reachable from them are never reported.
  class PERFTOOLS_DLL_DECL Disabler {
   public:
    Disabler();
    ~Disabler();

   private:
    Disabler(const Disabler&);
    void operator=(const Disabler&);
    void* state_;  // heapkit-internal
  };

  // Tells the checker that *ptr (a heap object start) and everything reachable from it is not a
  // leak. Returns ptr. Non-heap pointers are reported (one line) and ignored.
  template <typename T>
  static T* IgnoreObject(T* ptr) {
    HeapLeakChecker_IgnoreObject(static_cast<const void*>(const_cast<const T*>(ptr)));
    return ptr;
  }
  // Undoes IgnoreObject.
  static void UnIgnoreObject(const void* ptr);

 private:
  // Exported for programs built against headers whose inline NoLeaks() and IgnoreObject() call
  // them (gperftools' IgnoreObject does); the same as NoLeaks() and IgnoreObject().
  bool DoNoLeaks();
  static void DoIgnoreObject(const void* ptr);

  HeapLeakChecker(const HeapLeakChecker&);
  void operator=(const HeapLeakChecker&);

  void* state_;  // heapkit-internal (mmap'd), never the public heap
};

// Hides a pointer from the leak checker (an XOR mask), e.g. to make an object deliberately
// unreachable in tests.
template <class T>
class HiddenPointer {
 public:
  explicit HiddenPointer(T* t) : masked_t_(reinterpret_cast<uintptr_t>(t) ^ kHideMask) {}
  T* get() const { return reinterpret_cast<T*>(masked_t_ ^ kHideMask); }

 private:
  static const uintptr_t kHideMask = static_cast<uintptr_t>(0xF03A5F7BF03A5F7BULL);
  uintptr_t masked_t_;
};

// Functions registered here run just before the whole-program check (not for named checks).
class PERFTOOLS_DLL_DECL HeapCleaner {
 public:
  typedef void (*void_function)(void);
  HeapCleaner(void_function f);
  static void RunHeapCleanups();
};

// REGISTER_HEAPCHECK_CLEANUP(name, body): run `body` before the whole-program leak check.
#define REGISTER_HEAPCHECK_CLEANUP(name, body)                            \
  namespace {                                                             \
  void heapcheck_cleanup_##name() { body; }                               \
  static HeapCleaner heapcheck_cleaner_##name(&heapcheck_cleanup_##name); \
  }

#endif  // HEAPKIT_GPERFTOOLS_HEAP_CHECKER_H_
