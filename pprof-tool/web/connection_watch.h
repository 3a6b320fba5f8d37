// Deadlines and per-client limits for the web server's connections.
//
// cpp-httplib 0.11 reads a request with a timeout per read, not per request, and offers no hook
// at accept: a client sending one header byte a second holds its connection (and thread)
// forever. The watch keeps, per accepted socket, a deadline by which the request's headers must
// have arrived; a reaper thread shuts down (shutdown(2)) the sockets past their deadline, so the
// connection's thread sees the end of the stream and closes it. The deadline is kHeaderSeconds
// from the accept, or kHeaderSeconds + kAnswerSeconds from the start of the previous answer's
// send (keep-alive); it does not run while a view is computed.
//
// The accept is found from the task queue (connection_threads.h) right after it: the new socket
// is the one connected to the listening port that the watch does not know yet (/proc/self/fd).
// Peers are told apart by address and port, so a descriptor number reused by a later
// connection is never mistaken for an earlier one.
//
// Per-client limit: a client that is not on this machine (the server bound to a non-loopback
// address on purpose) may hold at most kMaxConnectionsPerRemoteClient connections; more are
// shut down at once. Loopback clients are all the same address (every local user and browser),
// so for them the deadline alone applies.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace heapkit::pprof {

inline constexpr int kHeaderSeconds = 5;
inline constexpr int kAnswerSeconds = 10;
inline constexpr size_t kMaxConnectionsPerRemoteClient = 32;

class ConnectionWatch {
 public:
  explicit ConnectionWatch(int listen_port);
  ~ConnectionWatch();
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

  struct Socket {
    int fd = -1;  // -1: none found
    int peer_port = 0;
  };
  // On the accepting thread, after an accept: registers the new socket and returns it. A remote
  // client over its limit has the socket shut down here.
  Socket Accepted();
  // The connection's thread is done with the socket (closed; its number may be reused already).
  void Closed(Socket socket);
  // The request of peer addr:port has its headers (the deadline stops) / has been answered
  // (the deadline for the next request starts).
  void HeadersRead(const std::string& addr, int port);
  void Answered(const std::string& addr, int port);

 private:
  using Clock = std::chrono::steady_clock;
  struct Conn {
    std::string addr;
    int port = 0;
    bool loopback = true;
    bool waiting = true;  // for headers: the deadline runs
    Clock::time_point deadline;
  };
  void Reap();
  Conn* Find(const std::string& addr, int port);  // mutex_ held

  const int listen_port_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::map<int, Conn> conns_;  // by descriptor
  std::thread reaper_;
};

}  // namespace heapkit::pprof
