// The on-demand library's HTTP endpoint (HEAPKIT_HTTP): one helper thread serving GET requests
// for live heap profiles (/debug/pprof/heap, /debug/pprof/allocs) and Prometheus metrics
// (/metrics).
//
// Safety for the service it runs in:
//   - one thread, the classic signals blocked (real-time ones stay open for the leak checker's
//     stop signal), a poll() loop over non-blocking sockets: a client can only ever delay
//     other clients, never a thread of the program (the program's threads meet the server only
//     in the profiler's table lock while a sample is copied out);
//   - its own allocations (the answer, the symbolizer's index) go through the program's
//     allocator and are sampled like the program's;
//   - caps: kMaxConnections open at once (more are accepted and closed at once), a request
//     head of at most kMaxRequestBytes (else 431 and close), kRequestTimeoutMs to send it and
//     kResponseTimeoutMs to read the answer (else closed); one request per connection;
//   - symbolization from local files only: no debuginfod client, no network.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace heapkit::prof::http {

inline constexpr int kMaxConnections = 16;
inline constexpr size_t kMaxRequestBytes = 8192;
inline constexpr int kRequestTimeoutMs = 5000;
inline constexpr int kResponseTimeoutMs = 10000;

using TextSink = void (*)(void* ctx, const char* data, size_t length);
struct ServerHooks {
  void (*heap_sample)(TextSink sink, void* ctx);  // the legacy heap profile
  int (*numeric_property)(const char* name, size_t* value);  // MallocExtension's
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string extra_headers;
  std::string body;
  // A delayed answer (seconds=N): the server calls `later` after delay_ms and sends what it
  // returns, serving other clients meanwhile (the connection counts against the cap).
  std::function<Response()> later;
  int delay_ms = 0;
};

inline constexpr int kMaxDelaySeconds = 60;

// Answers one request target ("/debug/pprof/heap?debug=1") of a GET.
Response Handle(const std::string& target, const ServerHooks& hooks);

// Binds `address` ("host:port", ":port", "[v6]:port"; host empty → 127.0.0.1) and starts the
// thread. false with one line in *error if the address is bad or cannot be bound. *bound gets
// "host:port" as bound (the port picked for ":0").
bool StartServer(const char* address, const ServerHooks& hooks, std::string* bound,
                 std::string* error);

}  // namespace heapkit::prof::http
