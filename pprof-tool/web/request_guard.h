// Which requests the web UI answers, judged from their headers before any view runs.
//
// DNS rebinding: a web page the user visits can point its own host name at 127.0.0.1 and then
// read the UI "same-origin". Its requests still carry that name in `Host`, so a server listening
// on a loopback address answers only the names that mean this server: its listen address,
// `localhost`, `127.0.0.1` and `[::1]`, each with the port (without one only for port 80).
// A server the user bound to another address on purpose (--http=0.0.0.0:8080, a LAN address or
// host name) is meant to be reached under names the tool cannot know, and answers any Host.
//
// Cross-site requests: every view runs the report pipeline, so a page on another site (an
// <img src>, a form, a fetch) must not be able to make the UI work for it. Browsers say where a
// request comes from in `Sec-Fetch-Site` (same-origin, same-site, cross-site, or none for a typed
// address or bookmark) and, for scripted and form requests, in `Origin`. A request whose
// Sec-Fetch-Site is cross-site or same-site (another port of localhost is "same-site"), or whose
// Origin is not one of the allowed hosts, is refused. Clients that send neither (curl, scripts)
// are answered.
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// True for "localhost", 127.0.0.0/8 and ::1 (the forms ParseListenAddress leaves in host).
bool IsLoopbackHost(std::string_view host);

class RequestGuard {
 public:
  // `listen_host` as given to --http (brackets removed), `port` the bound port.
  RequestGuard(const std::string& listen_host, int port);

  // "" when the request may be answered, else one line saying why not (answer 403).
  std::string Refusal(std::string_view host, std::string_view origin,
                      std::string_view sec_fetch_site) const;

 private:
  bool AllowedHost(std::string_view host) const;

  bool any_host_;
  std::string listen_host_;
  int port_;
};

}  // namespace heapkit::pprof
