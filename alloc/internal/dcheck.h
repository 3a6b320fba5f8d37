// HEAPKIT_DCHECK(cond): checks an invariant in the debug build (cmake -DHEAPKIT_DEBUG=ON, which
// defines HEAPKIT_DEBUG=1 for every runtime file). In other builds it compiles to nothing: the
// condition is parsed and type-checked (so it cannot rot) but never evaluated.
//
// On failure: one line, "heapkit: DCHECK failed: <file>:<line>: <condition>", written with the
// runtime's malloc-free, async-signal-safe log (log.h), then abort(). Nothing is allocated, so a
// check may sit anywhere in the runtime: under allocator locks, in signal handlers, while the
// world is stopped.
//
// Where they go: at the invariants the components' READMEs state (size-class bounds, span
// states, page-map entries, free-list membership, which lock a table update holds, the flood's
// work stack), on slow paths. None on the malloc/free fast paths.
#pragma once

#include "alloc/internal/log.h"

#if defined(HEAPKIT_DEBUG) && HEAPKIT_DEBUG
#define HEAPKIT_DCHECK_IS_ON 1
#define HEAPKIT_DCHECK(cond)                    \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::heapkit::internal::Fatal("DCHECK failed: %s:%d: %s", __FILE__, __LINE__, #cond))
#else
#define HEAPKIT_DCHECK_IS_ON 0
#define HEAPKIT_DCHECK(cond) static_cast<void>(sizeof(static_cast<bool>(cond)))
#endif
