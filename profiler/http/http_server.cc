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
#include <memory>
#include <string_view>
#include <vector>

#include "alloc/internal/monotonic_clock.h"
#include "profiler/http/access_policy.h"
#include "profiler/http/listen_address.h"
#include "profiler/http/process_symbolizer.h"

namespace heapkit::prof::http {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
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
  int pending_fd = -1;                // or once this is readable (Response::wait_fd)
  PeerOwner peer;                     // found once, at accept
};

struct Server {
  int listen_fd = -1;
  int spare_fd = -1;                     // /dev/null, given up to take a connection at EMFILE
  int64_t listener_paused_until_ms = 0;  // accept failed with nothing to give up: wait
  ServerHooks hooks;
  std::unique_ptr<Admission> admission;
  PeerLookup peers;
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

// Calls f(name, value) for each header line of a head (the request line excluded), the value
// without its leading spaces.
template <typename F>
void ForEachHeader(std::string_view head, F f) {
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const size_t next = head.find("\r\n", at + 2);
    const std::string_view line = head.substr(at + 2, next - at - 2);
    at = next;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    f(line.substr(0, colon), value);
  }
}

// Content-Length of a head (0 if absent); -1 if malformed.
long ContentLength(std::string_view head) {
  long length = 0;
  bool seen = false;
  ForEachHeader(head, [&](std::string_view name, std::string_view value) {
    if (!EqualsIgnoringCase(name, "content-length") || length < 0) return;
    long n = 0;
    if (seen || value.empty() || value.size() > 9) {
      length = -1;
      return;
    }
    for (char c : value) {
      if (c < '0' || c > '9') {
        length = -1;
        return;
      }
      n = n * 10 + (c - '0');
    }
    seen = true;
    length = n;
  });
  return length;
}

// The headers the admission reads; false if one of them is repeated (a proxy in front and this
// server could each read a different one).
bool ReadHeaders(std::string_view head, Request* request) {
  struct Wanted {
    const char* name;
    std::string* value;
    int seen;
  } wanted[] = {{"host", &request->host, 0},
                {"origin", &request->origin, 0},
                {"sec-fetch-site", &request->sec_fetch_site, 0},
                {"referer", &request->referer, 0},
                {"authorization", &request->authorization, 0}};
  bool unique = true;
  ForEachHeader(head, [&](std::string_view name, std::string_view value) {
    for (Wanted& w : wanted) {
      if (!EqualsIgnoringCase(name, w.name)) continue;
      if (++w.seen > 1) unique = false;
      w.value->assign(value);
    }
  });
  return unique;
}

// The request line of a complete head: "GET /path?query HTTP/1.1", then the headers.
Response Answer(const Server& s, const Connection& c, const std::string& head, std::string body) {
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
  if (!ReadHeaders(head, &request))
    return Error(400, "a repeated Host, Origin, Referer, Sec-Fetch-Site or Authorization");
  request.peer = c.peer;
  request.admission = s.admission.get();
  return Handle(request, s.hooks);
}

void CloseConnection(Connection* c) {
  close(c->fd);
  c->fd = -1;
}

size_t DelayedCount(const Server& s) {
  size_t n = 0;
  for (const Connection& c : s.connections) n += c.fd >= 0 && c.pending && c.pending_fd < 0;
  return n;
}

void StartResponse(Server* s, Connection* c, Response r) {
  c->request.clear();
  c->request.shrink_to_fit();
  if (r.later) {
    if (r.wait_fd < 0 && DelayedCount(*s) >= static_cast<size_t>(kMaxDelayed)) {
      r = Error(503, "too many delayed answers at once");
    } else {
      c->pending = std::move(r.later);
      c->pending_fd = r.wait_fd;
      c->deadline_ms = internal::MonotonicMillis() + r.delay_ms;
      return;
    }
  }
  c->response = Serialize(r);
  c->sent = 0;
  c->writing = true;
  c->deadline_ms = internal::MonotonicMillis() + kResponseTimeoutMs;
  c->progress_ms = internal::MonotonicMillis();
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
  StartResponse(s, c, Answer(*s, *c, c->request.substr(0, c->head_bytes - 2), std::move(body)));
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
    c->progress_ms = internal::MonotonicMillis();
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
    c->progress_ms = internal::MonotonicMillis();
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

// Out of descriptors: the spare one is given up to accept the waiting connection and close it
// (its client sees the connection closed), then taken back. false if there was none to give
// up, or the connection could not be taken even so.
bool DropOneConnection(Server* s) {
  if (s->spare_fd < 0) {
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return false;
  }
  close(s->spare_fd);
  const int fd = accept4(s->listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) close(fd);
  s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return fd >= 0;
}

// Accepts what is waiting and reads each new connection at once: a scraper's request usually
// arrives with its connection, and is answered before anything can evict it.
void AcceptAll(Server* s) {
  for (int accepted = 0; accepted < 4 * kMaxConnections; ++accepted) {
    const int fd = accept4(s->listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && DropOneConnection(s)) continue;
      // Out of descriptors with none to give up, or out of memory: the connection stays queued
      // and the listener is left out of poll() for a while rather than polled in a loop.
      s->listener_paused_until_ms = internal::MonotonicMillis() + kAcceptBackoffMs;
      return;
    }
    if (OpenCount(*s) >= static_cast<size_t>(kMaxConnections) && !EvictStalest(s)) {
      close(fd);  // every slot is a delayed answer: the client sees the connection closed
      continue;
    }
    Connection c;
    c.fd = fd;
    c.peer = s->peers.Find(fd);
    c.deadline_ms = internal::MonotonicMillis() + kRequestTimeoutMs;
    c.progress_ms = internal::MonotonicMillis();
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
  size_t told_heap_bytes = 0;
  for (;;) {
    const size_t heap_bytes = EndpointHeapBytes();
    if (heap_bytes != told_heap_bytes && s->hooks.endpoint_heap_bytes != nullptr) {
      s->hooks.endpoint_heap_bytes(heap_bytes);
      told_heap_bytes = heap_bytes;
    }
    fds.clear();
    const bool listening = internal::MonotonicMillis() >= s->listener_paused_until_ms;
    fds.push_back({listening ? s->listen_fd : -1, POLLIN, 0});  // poll() skips a negative fd
    int64_t next_deadline = listening ? -1 : s->listener_paused_until_ms;
    for (const Connection& c : s->connections) {
      // A pending answer waits for its descriptor (the client is not read meanwhile).
      if (c.pending_fd >= 0) {
        fds.push_back({c.pending_fd, POLLIN, 0});
      } else {
        const short events = c.pending ? 0 : c.writing ? POLLOUT : POLLIN;
        fds.push_back({c.fd, events, 0});
      }
      if (next_deadline < 0 || c.deadline_ms < next_deadline) next_deadline = c.deadline_ms;
    }
    const int64_t drop_symbolizer_ms = SymbolizerDropDeadlineMs();
    if (drop_symbolizer_ms >= 0 && (next_deadline < 0 || drop_symbolizer_ms < next_deadline)) {
      next_deadline = drop_symbolizer_ms;
    }
    int timeout = -1;
    if (next_deadline >= 0) {
      const int64_t wait = next_deadline - internal::MonotonicMillis();
      timeout = wait < 0 ? 0 : static_cast<int>(wait);
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      usleep(10000);
      continue;
    }
    const int64_t now = internal::MonotonicMillis();
    if (drop_symbolizer_ms >= 0 && now >= drop_symbolizer_ms) {
      DropSymbolizer(s->hooks.return_memory);
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      Connection* c = &s->connections[i - 1];
      if (c->fd < 0) continue;
      // A pending answer (pending_fd) is always ended, whatever the client did meanwhile.
      if (c->pending_fd < 0 && fds[i].revents & (POLLERR | POLLNVAL)) {
        CloseConnection(c);
      } else if (c->pending) {
        if (now >= c->deadline_ms || (c->pending_fd >= 0 && fds[i].revents != 0)) {
          std::function<Response()> pending = std::move(c->pending);
          c->pending = nullptr;
          c->pending_fd = -1;
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
      if (c->fd >= 0 && !c->pending && internal::MonotonicMillis() >= c->deadline_ms) {
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

}  // namespace

bool StartServer(const char* address, const ServerHooks& hooks, std::string* bound,
                 std::string* rule, std::string* error) {
  ListenAddress where;
  if (!ParseListenAddress(address, &where, error)) return false;
  AccessPolicy policy;
  if (!policy.Configure(hooks, !where.unix_socket && !where.loopback, error)) return false;
  Listener listener;
  if (!OpenListener(where, &listener, error)) return false;
  const int fd = listener.fd;
  *bound = listener.bound;
  *rule = policy.Description();
  constexpr const char* kHint = "use the address heapkit's start line names";
  web::RequestGuard guard = where.unix_socket
                                ? web::RequestGuard::AnyHost(kHint)
                                : web::RequestGuard(listener.host, listener.port, kHint);
  auto* server = new Server;
  server->listen_fd = fd;
  server->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  server->admission = std::make_unique<Admission>(std::move(policy), std::move(guard));
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
    if (server->spare_fd >= 0) close(server->spare_fd);
    delete server;
    return false;
  }
  pthread_setname_np(thread, "heapkit-http");
  return true;
}

}  // namespace heapkit::prof::http
