/* Old spelling of <gperftools/tcmalloc.h>, kept for code that still includes it. */
#include <gperftools/tcmalloc.h>
