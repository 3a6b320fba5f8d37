#include "pprof-tool/web/connection_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace heapkit::pprof {
namespace {

// Address and port of a sockaddr, false for other families.
bool Endpoint(const sockaddr_storage& sa, std::string* addr, int* port, bool* loopback) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (sa.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(sa);
    inet_ntop(AF_INET, &in.sin_addr, buf, sizeof buf);
    *port = ntohs(in.sin_port);
    *loopback = (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  } else if (sa.ss_family == AF_INET6) {
    const auto& in = reinterpret_cast<const sockaddr_in6&>(sa);
    inet_ntop(AF_INET6, &in.sin6_addr, buf, sizeof buf);
    *port = ntohs(in.sin6_port);
    *loopback = IN6_IS_ADDR_LOOPBACK(&in.sin6_addr) ||
                (IN6_IS_ADDR_V4MAPPED(&in.sin6_addr) && in.sin6_addr.s6_addr[12] == 127);
  } else {
    return false;
  }
  *addr = buf;
  return true;
}

}  // namespace

ConnectionWatch::ConnectionWatch(int listen_port)
    : listen_port_(listen_port), reaper_([this] { Reap(); }) {}

ConnectionWatch::~ConnectionWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  reaper_.join();
}

ConnectionWatch::Socket ConnectionWatch::Accepted() {
  Socket found;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return found;
  std::lock_guard<std::mutex> lock(mutex_);
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = strtol(e->d_name, &end, 10);
    if (*end != '\0' || fd < 0 || fd == dirfd(dir)) continue;
    struct stat st;
    if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    std::string local_addr, peer_addr;
    int local_port = 0, peer_port = 0;
    bool local_loop = false, peer_loop = false;
    if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
        !Endpoint(local, &local_addr, &local_port, &local_loop) || local_port != listen_port_ ||
        getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &pl) != 0 ||
        !Endpoint(peer, &peer_addr, &peer_port, &peer_loop)) {
      continue;  // not a connection accepted on our port (the listening socket has no peer)
    }
    auto it = conns_.find(int(fd));
    if (it != conns_.end() && it->second.addr == peer_addr && it->second.port == peer_port)
      continue;
    Conn c;
    c.addr = peer_addr;
    c.port = peer_port;
    c.loopback = peer_loop;
    c.deadline = Clock::now() + std::chrono::seconds(kHeaderSeconds);
    size_t same_client = 0;
    for (const auto& [other_fd, other] : conns_)
      same_client += other_fd != fd && other.addr == peer_addr;
    if (!peer_loop && same_client >= kMaxConnectionsPerRemoteClient) shutdown(int(fd), SHUT_RDWR);
    conns_[int(fd)] = c;
    found = {int(fd), peer_port};
  }
  closedir(dir);
  return found;
}

void ConnectionWatch::Closed(Socket socket) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = conns_.find(socket.fd);
  if (it != conns_.end() && it->second.port == socket.peer_port) conns_.erase(it);
}

ConnectionWatch::Conn* ConnectionWatch::Find(const std::string& addr, int port) {
  for (auto& [fd, c] : conns_) {
    if (c.port == port && c.addr == addr) return &c;
  }
  return nullptr;
}

void ConnectionWatch::HeadersRead(const std::string& addr, int port) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (Conn* c = Find(addr, port)) c->waiting = false;
}

void ConnectionWatch::Answered(const std::string& addr, int port) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (Conn* c = Find(addr, port)) {
    c->waiting = true;
    c->deadline = Clock::now() + std::chrono::seconds(kHeaderSeconds + kAnswerSeconds);
  }
}

void ConnectionWatch::Reap() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    const Clock::time_point now = Clock::now();
    for (auto& [fd, c] : conns_) {
      if (!c.waiting || now < c.deadline) continue;
      // Still the same connection? (Closed() may not have run yet for a reused number.)
      sockaddr_storage peer{};
      socklen_t pl = sizeof peer;
      std::string addr;
      int port = 0;
      bool loop = false;
      if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) == 0 &&
          Endpoint(peer, &addr, &port, &loop) && addr == c.addr && port == c.port) {
        shutdown(fd, SHUT_RDWR);
      }
      c.waiting = false;  // once
    }
  }
}

}  // namespace heapkit::pprof
