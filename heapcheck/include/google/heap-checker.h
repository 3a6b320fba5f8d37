/* Old spelling of <gperftools/heap-checker.h>, kept for code that still includes it. */
#include <gperftools/heap-checker.h>
