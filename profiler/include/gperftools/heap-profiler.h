/* heapkit's implementation of gperftools' heap-profiler API (same names and meanings).
 *
 *   HEAPPROFILE=<prefix> ./prog        dumps <prefix>.0001.heap, <prefix>.0002.heap, ...
 *
 * or, from code:  HeapProfilerStart("/tmp/prof"); ... HeapProfilerDump("why"); ...
 *                 HeapProfilerStop();
 * See profiler/README.md for the environment variables. C and C++. */
#ifndef HEAPKIT_GPERFTOOLS_HEAP_PROFILER_H_
#define HEAPKIT_GPERFTOOLS_HEAP_PROFILER_H_

#include <stddef.h>

#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Starts profiling; dumps go to <prefix>.NNNN.heap. No-op if already running. */
PERFTOOLS_DLL_DECL void HeapProfilerStart(const char* prefix);

/* Non-zero if the heap profiler is running (started and not stopped). */
PERFTOOLS_DLL_DECL int IsHeapProfilerRunning(void);

/* Stops dumping. The numbering of dump files continues after a later HeapProfilerStart. */
PERFTOOLS_DLL_DECL void HeapProfilerStop(void);

/* Dumps a profile now to the next <prefix>.NNNN.heap; `reason` appears in the stderr line. */
PERFTOOLS_DLL_DECL void HeapProfilerDump(const char* reason);

/* The current profile in the legacy text format, as a string the caller must free() with
 * free(). An empty string if the profiler is not running. */
PERFTOOLS_DLL_DECL char* GetHeapProfile(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HEAPKIT_GPERFTOOLS_HEAP_PROFILER_H_ */
