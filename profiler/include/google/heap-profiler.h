/* Old spelling of <gperftools/heap-profiler.h>, kept for code that still includes it. */
#include <gperftools/heap-profiler.h>
