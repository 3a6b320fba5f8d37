/* Old spelling of <gperftools/malloc_extension_c.h>, kept for code that still includes it. */
#include <gperftools/malloc_extension_c.h>
