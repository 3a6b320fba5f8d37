/* heapkit's <gperftools/nallocx.h>: the usable size malloc would give, without allocating. */
#ifndef HEAPKIT_GPERFTOOLS_NALLOCX_H_
#define HEAPKIT_GPERFTOOLS_NALLOCX_H_

#include <stddef.h>

#ifndef PERFTOOLS_DLL_DECL
#define PERFTOOLS_DLL_DECL __attribute__((visibility("default")))
#endif

#ifndef PERFTOOLS_NOTHROW
#ifdef __cplusplus
#define PERFTOOLS_NOTHROW noexcept
#else
#define PERFTOOLS_NOTHROW
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* flags: MALLOCX_LG_ALIGN(la) asks for alignment 1 << la; 0 for malloc's own alignment. */
#define MALLOCX_LG_ALIGN(la) ((int)(la))
PERFTOOLS_DLL_DECL size_t nallocx(size_t size, int flags) PERFTOOLS_NOTHROW;
PERFTOOLS_DLL_DECL size_t tc_nallocx(size_t size, int flags) PERFTOOLS_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* HEAPKIT_GPERFTOOLS_NALLOCX_H_ */
