/* Old spelling of <gperftools/malloc_hook.h>, kept for code that still includes it. */
#include <gperftools/malloc_hook.h>
