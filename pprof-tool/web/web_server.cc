#include "pprof-tool/web/web_server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "pprof-tool/report/output.h"
#include "pprof-tool/web/connection_threads.h"
#include "pprof-tool/web/connection_watch.h"
#include "profiler/http/request_guard.h"
#include "pprof-tool/web/web_ui.h"

namespace heapkit::pprof {
namespace {

// A connection may stay silent (or between two bytes of a request) this long before it is
// closed; an answer's send may block this long. Threads: connection_threads.h.
constexpr int kReadTimeoutSeconds = 2;
constexpr int kWriteTimeoutSeconds = 10;
constexpr size_t kMaxConnectionThreads = 256;
constexpr int kDrainSeconds = 2;
// Every page is whole in its answer (page_assets.h): its inline style and script, the inline
// call graph, the flame graph's picture in an <object> from this server. The policy lets a
// page load nothing else from anywhere, nor send anything anywhere but this server's forms.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src 'self'; object-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'self'";

}  // namespace

bool ParseListenAddress(const std::string& text, ListenAddress* address, std::string* error) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    *error = "--http=" + text + ": expected [host]:port, e.g. --http=:8080";
    return false;
  }
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long n = port.empty() ? -1 : strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || n < 0 || n > 65535) {
    *error = "--http=" + text + ": the port must be a number from 0 to 65535";
    return false;
  }
  address->host = host.empty() ? "127.0.0.1" : host;
  address->port = int(n);
  return true;
}

namespace {

// Socket options, connection threads, the method filter, timeouts and the GET handler: refused
// by *guard, else answered by `ui`. *watch and *guard are set once the port is known.
void ConfigureServer(httplib::Server& server, WebUi& ui, std::unique_ptr<ConnectionWatch>& watch,
                     std::unique_ptr<web::RequestGuard>& guard) {
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which would let a second
  // server (or another process of the user) listen on the same port and take requests.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.new_task_queue = [&watch] {
    return new ConnectionThreads(kMaxConnectionThreads, kDrainSeconds, watch.get());
  };
  server.set_pre_routing_handler([&watch](const httplib::Request& req, httplib::Response& res) {
    watch->HeadersRead(req.remote_addr, req.remote_port);
    if (req.method == "GET" || req.method == "HEAD")
      return httplib::Server::HandlerResponse::Unhandled;
    watch->Answered(req.remote_addr, req.remote_port);
    res.status = 405;
    res.set_content("pprof-tool: only GET requests are served\n", "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  });
  server.set_read_timeout(kReadTimeoutSeconds);
  server.set_write_timeout(kWriteTimeoutSeconds);
  server.set_keep_alive_timeout(kReadTimeoutSeconds);
  server.Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
    WebResponse r;
    const std::string refusal =
        guard->Refusal(req.get_header_value("Host"), req.get_header_value("Origin"),
                       req.get_header_value("Sec-Fetch-Site"));
    if (!refusal.empty()) {
      r = {403, "text/plain; charset=utf-8", "pprof-tool: " + refusal + "\n"};
    } else {
      try {
        r = ui.Handle(req.path, req.params);
      } catch (const std::exception& e) {
        r = {500, "text/plain; charset=utf-8",
             std::string("pprof-tool: internal error: ") + e.what() + "\n"};
      }
    }
    watch->Answered(req.remote_addr, req.remote_port);
    res.status = r.status;
    res.set_header("Cache-Control", "no-store");
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_content(std::move(r.body), r.content_type.c_str());
  });
}

}  // namespace

int ServeWebUi(const WebInput& input, const ListenAddress& address, bool open_browser) {
  WebUi ui(input);
  std::unique_ptr<ConnectionWatch> watch;    // set once the port is known; outlives the server
  std::unique_ptr<web::RequestGuard> guard;  // set once the port is known
  httplib::Server server;
  ConfigureServer(server, ui, watch, guard);

  // SIGINT/SIGTERM are blocked before the server starts its threads (they inherit the mask) and
  // taken by sigwait below, so no handler runs inside httplib.
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);

  int port = address.port;
  bool bound = port == 0 ? (port = server.bind_to_any_port(address.host)) > 0
                         : server.bind_to_port(address.host, port);
  if (!bound) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    fprintf(stderr, "pprof-tool: --http: cannot listen on %s:%d\n", address.host.c_str(),
            address.port);
    return 2;
  }
  guard = std::make_unique<web::RequestGuard>(address.host, port,
                                              "open the address pprof-tool printed");
  watch = std::make_unique<ConnectionWatch>(port);
  const bool ipv6 = address.host.find(':') != std::string::npos;
  const std::string url =
      "http://" + (ipv6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(port);
  printf("Serving web UI on %s\n", url.c_str());
  fflush(stdout);
  if (open_browser) OpenInBrowser(url + "/ui/");

  std::atomic<bool> signalled{false};
  std::thread waiter([&server, &stop_signals, &signalled] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    signalled = true;
    server.stop();
  });
  server.listen_after_bind();
  // listen_after_bind returned after stop(), or on an accept failure: then wake the waiter.
  if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return 0;
}

}  // namespace heapkit::pprof
