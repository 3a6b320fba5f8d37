#include "profiler/http/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <string_view>
#include <vector>

namespace heapkit::prof::http {
namespace {

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

std::string Serialize(const Response& r) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) +
                    "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) +
                    "\r\nX-Content-Type-Options: nosniff\r\n" + r.extra_headers +
                    "Connection: close\r\n\r\n";
  return out + r.body;
}

Response Error(int status, const std::string& line) {
  Response r;
  r.status = status;
  r.body = line + "\n";
  return r;
}

struct Connection {
  int fd = -1;
  int64_t deadline_ms = 0;
  int64_t progress_ms = 0;  // accepted, or last read or sent a byte: the eviction order
  std::string request;
  size_t head_bytes = 0;  // with the blank line, once the head is complete
  size_t body_bytes = 0;  // Content-Length of a POST
  std::string response;
  size_t sent = 0;
  bool writing = false;
  std::function<Response()> pending;  // a delayed answer, due at deadline_ms
};

struct Server {
  int listen_fd = -1;
  ServerHooks hooks;
  std::vector<Connection> connections;
};

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (tolower(static_cast<unsigned char>(a[i])) != tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Content-Length of a head (0 if absent); -1 if malformed.
long ContentLength(std::string_view head) {
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const size_t next = head.find("\r\n", at + 2);
    const std::string_view line = head.substr(at + 2, next - at - 2);
    at = next;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos ||
        !EqualsIgnoringCase(line.substr(0, colon), "content-length"))
      continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    long n = 0;
    if (value.empty() || value.size() > 9) return -1;
    for (char c : value) {
      if (c < '0' || c > '9') return -1;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return 0;
}

// The request line of a complete head: "GET /path?query HTTP/1.1".
Response Answer(const std::string& head, std::string body, const ServerHooks& hooks) {
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
    return Error(400, "malformed request line");
  }
  Request request;
  request.method = line.substr(0, sp1);
  request.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  request.body = std::move(body);
  return Handle(request, hooks);
}

void CloseConnection(Connection* c) {
  close(c->fd);
  c->fd = -1;
}

size_t DelayedCount(const Server& s) {
  size_t n = 0;
  for (const Connection& c : s.connections) n += c.fd >= 0 && c.pending ? 1 : 0;
  return n;
}

void StartResponse(Server* s, Connection* c, Response r) {
  c->request.clear();
  c->request.shrink_to_fit();
  if (r.later) {
    if (DelayedCount(*s) >= static_cast<size_t>(kMaxDelayed)) {
      r = Error(503, "too many delayed answers at once");
    } else {
      c->pending = std::move(r.later);
      c->deadline_ms = NowMs() + r.delay_ms;
      return;
    }
  }
  c->response = Serialize(r);
  c->sent = 0;
  c->writing = true;
  c->deadline_ms = NowMs() + kResponseTimeoutMs;
  c->progress_ms = NowMs();
  shutdown(c->fd, SHUT_RD);
}

// After each read: a complete head (and body) is answered; too much is refused.
void TryAnswer(Server* s, Connection* c) {
  if (c->head_bytes == 0) {
    const size_t end = c->request.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c->request.size() > kMaxRequestBytes)
        StartResponse(s, c, Error(431, "request head larger than 8192 bytes"));
      return;
    }
    if (end + 4 > kMaxRequestBytes) {
      return StartResponse(s, c, Error(431, "request head larger than 8192 bytes"));
    }
    const long length = ContentLength(std::string_view(c->request).substr(0, end + 2));
    if (length < 0) return StartResponse(s, c, Error(400, "malformed Content-Length"));
    if (static_cast<size_t>(length) > kMaxBodyBytes) {
      return StartResponse(s, c, Error(413, "request body larger than 65536 bytes"));
    }
    c->head_bytes = end + 4;
    c->body_bytes = static_cast<size_t>(length);
  }
  if (c->request.size() < c->head_bytes + c->body_bytes) return;
  std::string body = c->request.substr(c->head_bytes, c->body_bytes);
  StartResponse(s, c, Answer(c->request.substr(0, c->head_bytes - 2), std::move(body), s->hooks));
}

void OnReadable(Server* s, Connection* c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(c->fd, buf, sizeof buf, 0);
    if (n == 0) return CloseConnection(c);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      return CloseConnection(c);
    }
    c->progress_ms = NowMs();
    c->request.append(buf, static_cast<size_t>(n));
    TryAnswer(s, c);
    if (c->writing || c->pending) return;
  }
}

void OnWritable(Connection* c) {
  while (c->sent < c->response.size()) {
    const ssize_t n =
        send(c->fd, c->response.data() + c->sent, c->response.size() - c->sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      return CloseConnection(c);
    }
    c->sent += static_cast<size_t>(n);
    c->progress_ms = NowMs();
  }
  CloseConnection(c);
}

// Over the cap: the open connection that made progress least recently goes (a delayed answer
// is never evicted: it waits for the clock, not for its client). false if none can go.
bool EvictStalest(Server* s) {
  Connection* stalest = nullptr;
  for (Connection& c : s->connections) {
    if (c.fd < 0 || c.pending) continue;
    if (stalest == nullptr || c.progress_ms < stalest->progress_ms) stalest = &c;
  }
  if (stalest == nullptr) return false;
  CloseConnection(stalest);
  return true;
}

size_t OpenCount(const Server& s) {
  size_t n = 0;
  for (const Connection& c : s.connections) n += c.fd >= 0 ? 1 : 0;
  return n;
}

// Accepts what is waiting and reads each new connection at once: a scraper's request usually
// arrives with its connection, and is answered before anything can evict it.
void AcceptAll(Server* s) {
  for (int accepted = 0; accepted < 4 * kMaxConnections; ++accepted) {
    const int fd = accept4(s->listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: try again on the next poll
    if (OpenCount(*s) >= static_cast<size_t>(kMaxConnections) && !EvictStalest(s)) {
      close(fd);  // every slot is a delayed answer: the client sees the connection closed
      continue;
    }
    Connection c;
    c.fd = fd;
    c.deadline_ms = NowMs() + kRequestTimeoutMs;
    c.progress_ms = NowMs();
    s->connections.push_back(std::move(c));
    Connection* added = &s->connections.back();
    OnReadable(s, added);
    if (added->fd >= 0 && added->writing) OnWritable(added);
  }
}

// A forked child has no server thread: it must not keep the listening socket (and so the port)
// open after the parent is gone.
int g_listen_fd = -1;
void CloseListenerInChild() {
  if (g_listen_fd >= 0) close(g_listen_fd);
  g_listen_fd = -1;
}

void* Serve(void* arg) {
  Server* s = static_cast<Server*>(arg);
  if (s->hooks.server_thread_started != nullptr) s->hooks.server_thread_started();
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({s->listen_fd, POLLIN, 0});
    int64_t next_deadline = -1;
    for (const Connection& c : s->connections) {
      const short events = c.pending ? 0 : c.writing ? POLLOUT : POLLIN;
      fds.push_back({c.fd, events, 0});
      if (next_deadline < 0 || c.deadline_ms < next_deadline) next_deadline = c.deadline_ms;
    }
    int timeout = -1;
    if (next_deadline >= 0) {
      const int64_t wait = next_deadline - NowMs();
      timeout = wait < 0 ? 0 : static_cast<int>(wait);
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      usleep(10000);
      continue;
    }
    const int64_t now = NowMs();
    for (size_t i = 1; i < fds.size(); ++i) {
      Connection* c = &s->connections[i - 1];
      if (c->fd < 0) continue;
      if (fds[i].revents & (POLLERR | POLLNVAL)) {
        CloseConnection(c);
      } else if (c->pending) {
        if (now >= c->deadline_ms) {
          std::function<Response()> pending = std::move(c->pending);
          c->pending = nullptr;
          StartResponse(s, c, pending());
          OnWritable(c);
        }
        continue;
      } else if (fds[i].revents & (POLLIN | POLLHUP) && !c->writing) {
        OnReadable(s, c);
        if (c->fd >= 0 && c->writing) OnWritable(c);
      } else if (fds[i].revents & (POLLOUT | POLLHUP) && c->writing) {
        OnWritable(c);
      }
      if (c->fd >= 0 && !c->pending && NowMs() >= c->deadline_ms) {
        if (c->writing) {
          CloseConnection(c);  // the client does not read its answer: drop it
        } else {
          StartResponse(s, c, Error(408, "request not received in time"));
          OnWritable(c);
        }
      }
    }
    std::vector<Connection> open;
    open.reserve(s->connections.size() + 1);
    for (Connection& c : s->connections) {
      if (c.fd >= 0) open.push_back(std::move(c));
    }
    s->connections.swap(open);
    if (fds[0].revents & POLLIN) {
      AcceptAll(s);
      std::vector<Connection> still;
      for (Connection& c : s->connections) {
        if (c.fd >= 0) still.push_back(std::move(c));
      }
      s->connections.swap(still);
    }
  }
  return nullptr;
}

bool ParseAddress(const char* address, sockaddr_storage* out, socklen_t* length,
                  std::string* error) {
  std::string text(address);
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) {
      *error = "HEAPKIT_HTTP: expected [address]:port";
      return false;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      *error = "HEAPKIT_HTTP: expected host:port or :port";
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  const long port_number = strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || port_number < 0 || port_number > 65535) {
    *error = "HEAPKIT_HTTP: bad port";
    return false;
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";  // loopback unless named
  memset(out, 0, sizeof *out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port_number));
    *length = sizeof *v4;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port_number));
    *length = sizeof *v6;
  } else {
    *error = "HEAPKIT_HTTP: the host must be a numeric IPv4 or IPv6 address or localhost";
    return false;
  }
  return true;
}

}  // namespace

bool StartServer(const char* address, const ServerHooks& hooks, std::string* bound,
                 std::string* error) {
  sockaddr_storage addr;
  socklen_t length = 0;
  if (!ParseAddress(address, &addr, &length, error)) return false;
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("HEAPKIT_HTTP: socket: ") + strerror(errno);
    return false;
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), length) != 0 || listen(fd, SOMAXCONN) != 0) {
    *error = std::string("HEAPKIT_HTTP: cannot listen on ") + address + ": " + strerror(errno);
    close(fd);
    return false;
  }
  sockaddr_storage actual;
  socklen_t actual_length = sizeof actual;
  getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &actual_length);
  char host[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (actual.ss_family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&actual);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    port = ntohs(v4->sin_port);
    *bound = std::string(host) + ":" + std::to_string(port);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&actual);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    port = ntohs(v6->sin6_port);
    *bound = "[" + std::string(host) + "]:" + std::to_string(port);
  }
  auto* server = new Server;
  server->listen_fd = fd;
  g_listen_fd = fd;
  pthread_atfork(nullptr, nullptr, &CloseListenerInChild);
  server->hooks = hooks;
  // The thread takes none of the classic signals the program expects on its own threads;
  // real-time signals stay open, so that the leak checker can stop it like any thread.
  sigset_t all, old;
  sigemptyset(&all);
  for (int signal = 1; signal < SIGRTMIN; ++signal) sigaddset(&all, signal);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  const int rc = pthread_create(&thread, &attr, &Serve, server);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    *error = std::string("HEAPKIT_HTTP: cannot start the thread: ") + strerror(rc);
    close(fd);
    delete server;
    return false;
  }
  pthread_setname_np(thread, "heapkit-http");
  return true;
}

}  // namespace heapkit::prof::http
