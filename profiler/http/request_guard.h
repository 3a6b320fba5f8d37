// Which requests a local HTTP server answers, judged from their headers before anything runs:
// one rule for pprof-tool's web UI (`--http`) and the runtime's endpoint (HEAPKIT_HTTP,
// http_server.h). Plain C++, no allocation rules: both link it (profiler/http/CMakeLists.txt).
//
// DNS rebinding: a web page the user visits can point its own host name at 127.0.0.1 and then
// read the server "same-origin". Its requests still carry that name in `Host`, so a server
// listening on a loopback address answers only the names that mean this server: its listen
// address, `localhost`, `127.0.0.1` and `[::1]`, each with the port (without one only for port
// 80). A server bound to another address on purpose (0.0.0.0, a LAN address) is meant to be
// reached under names it cannot know, and answers any Host; so does a Unix socket, which no
// browser can reach.
//
// Cross-site requests: a page on another site (an <img src>, a form, a fetch) must not make the
// server work for it nor read its answer. Browsers say where a request comes from in
// `Sec-Fetch-Site` (same-origin, same-site, cross-site, or none for a typed address or
// bookmark) and, for scripted and form requests, in `Origin`. A request whose Sec-Fetch-Site is
// cross-site or same-site (another port of localhost is "same-site"), or whose Origin is not
// one of the allowed hosts, is refused. A request to an endpoint with a side effect is also
// refused when its `Referer` names another origin: browsers without Fetch Metadata still send
// one with an <img>. Clients that send none of these (curl, scrapers, go tool pprof) are
// answered; who they are is another question (the runtime's access_policy.h).
#pragma once

#include <string>
#include <string_view>

namespace heapkit::web {

// True for "localhost", 127.0.0.0/8 and ::1 (brackets removed).
bool IsLoopbackHost(std::string_view host);

// The headers the rule reads (empty when absent).
struct RequestHeaders {
  std::string_view host;
  std::string_view origin;
  std::string_view sec_fetch_site;
  std::string_view referer;
};

class RequestGuard {
 public:
  enum class Verdict { kAnswer, kWrongHost, kCrossSite };

  // `listen_host` as bound (brackets removed), `port` the bound port; `hint` ends each
  // refusal line ("open the address pprof-tool printed").
  RequestGuard(const std::string& listen_host, int port, std::string hint);
  // A server no browser can reach by name (a Unix socket): any Host, the cross-site rule kept.
  static RequestGuard AnyHost(std::string hint);

  // kAnswer, or why not with one line (no control bytes) in *line. `side_effect`: the
  // endpoint changes state (a leak check, a delta's baseline): a foreign Referer is refused too.
  Verdict Judge(const RequestHeaders& request, bool side_effect, std::string* line) const;

  // "" when the request may be answered, else the line (pprof-tool's views: no side effects).
  std::string Refusal(std::string_view host, std::string_view origin,
                      std::string_view sec_fetch_site) const;

 private:
  RequestGuard(bool any_host, std::string listen_host, int port, std::string hint);
  bool AllowedHost(std::string_view host) const;
  // "http://" + an allowed host (and, bound elsewhere, the request's own Host), then `rest`.
  bool OurOrigin(std::string_view origin, std::string_view host, bool path_allowed) const;

  bool any_host_;
  std::string listen_host_;
  int port_;
  std::string hint_;
};

}  // namespace heapkit::web
