#include "pprof-tool/web/request_guard.h"

#include <arpa/inet.h>
#include <strings.h>

namespace heapkit::pprof {
namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
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

RequestGuard::RequestGuard(const std::string& listen_host, int port)
    : any_host_(!IsLoopbackHost(listen_host)), listen_host_(listen_host), port_(port) {}

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

std::string RequestGuard::Refusal(std::string_view host, std::string_view origin,
                                  std::string_view sec_fetch_site) const {
  auto shown = [](std::string_view s) {
    std::string out(s.substr(0, 100));
    for (char& c : out) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    return out;
  };
  if (!AllowedHost(host)) {
    return "refused: Host '" + shown(host) +
           "' is not this server's address (a page using DNS rebinding?); open the address "
           "pprof-tool printed, or bind a non-loopback address on purpose";
  }
  if (EqualsNoCase(sec_fetch_site, "cross-site") || EqualsNoCase(sec_fetch_site, "same-site")) {
    return "refused: a request from another site (Sec-Fetch-Site: " + shown(sec_fetch_site) +
           "); open the address pprof-tool printed";
  }
  if (!origin.empty()) {
    constexpr std::string_view kScheme = "http://";
    const bool ours = origin.size() > kScheme.size() &&
                      EqualsNoCase(origin.substr(0, kScheme.size()), kScheme) &&
                      AllowedHost(origin.substr(kScheme.size())) &&
                      (!any_host_ || EqualsNoCase(origin.substr(kScheme.size()), host));
    if (!ours) return "refused: a request from another origin (Origin: " + shown(origin) + ")";
  }
  return "";
}

}  // namespace heapkit::pprof
