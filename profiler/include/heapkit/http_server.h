/* heapkit's live profile server, started from code (the same server as HEAPKIT_HTTP=host:port;
 * profiler/README.md, "heapkit in a fleet"): /debug/pprof/heap, /allocs, /delta_heap, /growth,
 * /leaks (with HEAPCHECK), gperftools' /pprof/ paths and Prometheus' /metrics.
 * C and C++; link with -lheapkit (or preload libheapkit.so). */
#ifndef HEAPKIT_HTTP_SERVER_H_
#define HEAPKIT_HTTP_SERVER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the server on `address` ("127.0.0.1:6060", ":0" for a port the system picks, "[::1]:P";
 * an empty host means loopback; host names are refused, never resolved; "unix:/path" for a Unix
 * socket of mode 0600) and turns heap sampling on at the default period unless a period was
 * chosen already. One server per process: a second call (or one after HEAPKIT_HTTP started it)
 * fails. Only the process's own uid and root are answered, and no web page of another origin
 * (profiler/README.md, "Trust model"); HEAPKIT_HTTP_ALLOW_USERS, HEAPKIT_HTTP_TOKEN_FILE and
 * HEAPKIT_HTTP_ALLOW_REMOTE apply as with HEAPKIT_HTTP. One line on stderr names the address and
 * that rule.
 * Returns 1 and writes the bound address ("host:port", "unix:/path") into message, or returns 0
 * and writes one line naming the cause; message is NUL-terminated and truncated to
 * message_size. The server's own allocations never appear in the profiles. Unlike
 * HEAPKIT_HTTP, this call is honoured in a privileged (AT_SECURE) process: the program, not its
 * environment, chose it (the access variables are ignored there: its own uid and root only). */
__attribute__((visibility("default"))) int HeapkitStartHttpServer(const char* address,
                                                                  char* message,
                                                                  size_t message_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HEAPKIT_HTTP_SERVER_H_ */
