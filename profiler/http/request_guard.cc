#include "profiler/http/request_guard.h"

#include <arpa/inet.h>
#include <strings.h>

#include <utility>

namespace heapkit::web {
namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// A client-chosen value fit for a one-line message.
std::string Shown(std::string_view s) {
  std::string out(s.substr(0, 100));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (EqualsNoCase(host, "localhost")) return true;
  const std::string h(host);
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, h.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

RequestGuard::RequestGuard(bool any_host, std::string listen_host, int port, std::string hint)
    : any_host_(any_host),
      listen_host_(std::move(listen_host)),
      port_(port),
      hint_(std::move(hint)) {}

RequestGuard::RequestGuard(const std::string& listen_host, int port, std::string hint)
    : RequestGuard(!IsLoopbackHost(listen_host), listen_host, port, std::move(hint)) {}

RequestGuard RequestGuard::AnyHost(std::string hint) {
  return RequestGuard(true, "", 0, std::move(hint));
}

bool RequestGuard::AllowedHost(std::string_view host) const {
  if (any_host_) return true;
  const std::string port = ":" + std::to_string(port_);
  const bool v6 = listen_host_.find(':') != std::string::npos;
  const std::string names[] = {"localhost", "127.0.0.1", "[::1]",
                               v6 ? "[" + listen_host_ + "]" : listen_host_};
  for (const std::string& name : names) {
    if (EqualsNoCase(host, name + port)) return true;
    if (port_ == 80 && EqualsNoCase(host, name)) return true;
  }
  return false;
}

bool RequestGuard::OurOrigin(std::string_view origin, std::string_view host,
                             bool path_allowed) const {
  constexpr std::string_view kScheme = "http://";
  if (origin.size() <= kScheme.size() || !EqualsNoCase(origin.substr(0, kScheme.size()), kScheme))
    return false;
  std::string_view authority = origin.substr(kScheme.size());
  if (path_allowed) authority = authority.substr(0, authority.find('/'));  // a Referer's path
  // Bound elsewhere on purpose, any Host is answered: the origin must then be that Host.
  return AllowedHost(authority) && (!any_host_ || EqualsNoCase(authority, host));
}

RequestGuard::Verdict RequestGuard::Judge(const RequestHeaders& r, bool side_effect,
                                          std::string* line) const {
  if (!AllowedHost(r.host)) {
    *line = "refused: Host '" + Shown(r.host) +
            "' is not this server's address (a page using DNS rebinding?); " + hint_;
    return Verdict::kWrongHost;
  }
  if (EqualsNoCase(r.sec_fetch_site, "cross-site") || EqualsNoCase(r.sec_fetch_site, "same-site")) {
    *line = "refused: a request from another site (Sec-Fetch-Site: " + Shown(r.sec_fetch_site) +
            "); " + hint_;
    return Verdict::kCrossSite;
  }
  if (!r.origin.empty() && !OurOrigin(r.origin, r.host, false)) {
    *line = "refused: a request from another origin (Origin: " + Shown(r.origin) + "); " + hint_;
    return Verdict::kCrossSite;
  }
  if (side_effect && !r.referer.empty() && !OurOrigin(r.referer, r.host, true)) {
    *line =
        "refused: a request with a side effect from another page (Referer: " + Shown(r.referer) +
        "); " + hint_;
    return Verdict::kCrossSite;
  }
  return Verdict::kAnswer;
}

std::string RequestGuard::Refusal(std::string_view host, std::string_view origin,
                                  std::string_view sec_fetch_site) const {
  std::string line;
  if (Judge({host, origin, sec_fetch_site, ""}, false, &line) == Verdict::kAnswer) return "";
  return line;
}

}  // namespace heapkit::web
