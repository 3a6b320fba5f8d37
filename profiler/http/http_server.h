// The on-demand library's live profile server (HEAPKIT_HTTP, HeapkitStartHttpServer): one
// helper thread serving Go's /debug/pprof/ paths, gperftools' /pprof/ paths and Prometheus'
// /metrics (routes.cc).
//
// Safety for the service it runs in:
//   - one thread, the classic signals blocked (real-time ones stay open for the leak checker's
//     stop signal), a poll() loop over non-blocking sockets: a client can only ever delay
//     other clients, never a thread of the program (the program's threads meet the server only
//     in the profiler's table lock while a sample is copied out, and in a /debug/pprof/leaks
//     check, which stops them for the fork of its copy; the loop serves other clients while
//     the copy floods, a pending answer polled on the copy's pipe);
//   - its own allocations (answers, the symbolizer's index) go through the program's allocator
//     with the thread's recording off (ServerHooks::server_thread_started): never sampled into
//     the profiles, never reported as leaks; the symbolizer is dropped when the thread is idle
//     (process_symbolizer.h) and what it keeps is told to the runtime after each answer;
//   - caps: kMaxConnections open at once; a new connection over the cap evicts the open one
//     that made progress least recently (sent or read nothing for longest; delayed answers
//     excepted), so idle and slowloris clients go first and a scraper that sends its request
//     at once is served; at most kMaxDelayed delayed answers (seconds=N) at once, else 503;
//     a request head of at most kMaxRequestBytes (else 431) and a POST body of at most
//     kMaxBodyBytes (else 413); kRequestTimeoutMs from accept to the whole request and
//     kResponseTimeoutMs to read the answer (else closed); one request per connection;
//   - who may ask: the service's uid, root and those allowed by configuration, from a page of
//     no other site (access_policy.h); refusals are 403/421 with one line, before any route;
//   - out of descriptors (EMFILE/ENFILE): a spare descriptor, closed to accept and drop the
//     waiting connection, and the listener left out of poll() for kAcceptBackoffMs when even
//     that fails, so the thread never spins on a connection it cannot take;
//   - symbolization from local files only: no debuginfod client, no network.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "profiler/http/peer_owner.h"
#include "profiler/http/server_hooks.h"

namespace heapkit::prof::http {

inline constexpr int kMaxConnections = 64;
inline constexpr int kMaxDelayed = 8;
inline constexpr size_t kMaxRequestBytes = 8192;
inline constexpr size_t kMaxBodyBytes = 64 * 1024;
inline constexpr int kRequestTimeoutMs = 5000;
inline constexpr int kResponseTimeoutMs = 10000;
inline constexpr int kAcceptBackoffMs = 500;

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string extra_headers;
  std::string body;
  // A delayed answer (seconds=N): the server calls `later` after delay_ms and sends what it
  // returns, serving other clients meanwhile (the connection counts against kMaxDelayed).
  // With wait_fd: a pending answer (a live leak check's copy flooding), due as soon as wait_fd
  // is readable or hung up, at delay_ms at the latest; `later` is then always called, exactly
  // once, whatever happens to the client meanwhile (it ends what the route began), and these
  // answers do not count against kMaxDelayed (the runtime admits one at a time).
  std::function<Response()> later;
  int delay_ms = 0;
  int wait_fd = -1;
};

inline constexpr int kMaxDelaySeconds = 60;

class Admission;

struct Request {
  std::string method;  // "GET" or "POST"
  std::string target;  // "/debug/pprof/heap?debug=1"
  std::string body;    // a POST's (at most kMaxBodyBytes)
  // The headers the admission reads (empty when absent).
  std::string host;
  std::string origin;
  std::string sec_fetch_site;
  std::string referer;
  std::string authorization;
  PeerOwner peer;                        // who connected (peer_owner.h)
  const Admission* admission = nullptr;  // the server's rule; nullptr: every request refused
};

// Answers one request: refused unless request.admission admits it (access_policy.h), else
// routed. Runs on the server's thread only (the routes keep state between requests:
// delta_heap's previous profile, the last leak check's totals).
Response Handle(const Request& request, const ServerHooks& hooks);

// Heap bytes the routes' state and the symbolizer's caches hold between answers (the
// delta_heap baseline, process_symbolizer.h's CachedBytes): /metrics' heapkit_endpoint_heap_bytes
// and, through ServerHooks::endpoint_heap_bytes, the dumps' memory figures.
size_t EndpointHeapBytes();

// Binds `address` (listen_address.h: "host:port", ":port", "[v6]:port", "unix:/path"), reads
// who may ask from hooks (access_policy.h) and starts the thread. false with one line in *error
// if the address or a setting is bad, or the address cannot be bound. *bound gets the address
// as bound (the port picked for ":0"), *rule who may ask ("clients: uid 1000, root; token:
// none").
bool StartServer(const char* address, const ServerHooks& hooks, std::string* bound,
                 std::string* rule, std::string* error);

}  // namespace heapkit::prof::http
