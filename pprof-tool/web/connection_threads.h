// The web server's connections, one thread each (cpp-httplib's TaskQueue interface).
//
// cpp-httplib's default pool has a few threads and one connection holds one until it closes, so
// a few idle or trickling sockets (a browser's speculative connections, or a local user's) made
// every other request wait for their read timeouts. Here each accepted connection gets a thread
// of its own, up to max_threads at a time (later connections wait for a free one): a slow or
// idle connection costs a thread, never another request's time. Views are answered concurrently
// as far as web_ui.h allows (kept answers at once; new ones one at a time).
//
// shutdown() (after SIGINT/SIGTERM) waits up to drain_seconds for the connections to finish,
// then ends the process with exit status 0: a client that keeps its socket open must not keep the
// server alive.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "pprof-tool/web/connection_watch.h"

namespace heapkit::pprof {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  // `watch` (may be null) is told of each connection's start and end (connection_watch.h).
  ConnectionThreads(size_t max_threads, int drain_seconds, ConnectionWatch* watch)
      : max_threads_(max_threads), drain_seconds_(drain_seconds), watch_(watch) {}
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  struct Task {
    std::function<void()> fn;
    ConnectionWatch::Socket socket;
  };
  void Run(Task task);

  const size_t max_threads_;
  const int drain_seconds_;
  ConnectionWatch* const watch_;
  std::mutex mutex_;
  std::condition_variable idle_;
  size_t running_ = 0;
  std::deque<Task> waiting_;
};

}  // namespace heapkit::pprof
