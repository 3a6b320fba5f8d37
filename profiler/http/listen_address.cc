#include "profiler/http/listen_address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "profiler/http/request_guard.h"

namespace heapkit::prof::http {
namespace {

// 1 to 5 digits, at most 65535: no sign, space or base prefix (strtol takes all three).
bool ParsePort(const std::string& text, int* port) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const int n = std::stoi(text);
  if (n > 65535) return false;
  *port = n;
  return true;
}

std::string Shown(const std::string& s) {
  std::string out = s.substr(0, 120);
  for (char& c : out) c = (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// The directory of `path`: a socket there can be swapped by others unless they cannot write
// into it or the sticky bit keeps them from our names.
bool SafeDirectory(const std::string& path, std::string* error) {
  const std::string dir = path.substr(0, std::max<size_t>(1, path.rfind('/')));
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    *error = "HEAPKIT_HTTP=unix:" + Shown(path) + ": " + Shown(dir) + ": " + strerror(errno);
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    *error = "HEAPKIT_HTTP=unix:" + Shown(path) + ": " + Shown(dir) +
             " is writable by others without the sticky bit";
    return false;
  }
  return true;
}

// What is at the path already: nothing, or a socket of ours nobody listens on (removed).
bool ClearStaleSocket(const std::string& path, const sockaddr_un& address, std::string* error) {
  const std::string where = "HEAPKIT_HTTP=unix:" + Shown(path) + ": ";
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    *error = where + strerror(errno);
    return false;
  }
  if (S_ISLNK(st.st_mode)) {
    *error = where + "a symbolic link is there; refusing to follow it";
    return false;
  }
  if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
    *error = where + "a file heapkit did not create is there (" +
             (S_ISSOCK(st.st_mode) ? "a socket of uid " + std::to_string(st.st_uid)
                                   : std::string("not a socket")) +
             "); remove it or choose another path";
    return false;
  }
  const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) {
    *error = where + strerror(errno);
    return false;
  }
  const int rc = connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int connect_errno = errno;
  close(probe);
  if (rc == 0 || connect_errno != ECONNREFUSED) {
    *error = where + "in use by a running server";
    return false;
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    *error = where + "cannot remove the stale socket: " + strerror(errno);
    return false;
  }
  return true;
}

bool OpenUnixListener(const std::string& path, Listener* out, std::string* error) {
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (!SafeDirectory(path, error) || !ClearStaleSocket(path, address, error)) return false;
  const std::string where = "HEAPKIT_HTTP=unix:" + Shown(path) + ": ";
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = where + strerror(errno);
    return false;
  }
  // bind() gives the new name this inode's mode less the umask: never wider than 0600.
  fchmod(fd, 0600);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    *error = where + "cannot bind: " + strerror(errno);
    close(fd);
    return false;
  }
  // No client can connect before listen(): the mode is right before anyone may.
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
      ((st.st_mode & 07777) != 0600 &&
       fchmodat(AT_FDCWD, path.c_str(), 0600, AT_SYMLINK_NOFOLLOW) != 0) ||
      listen(fd, SOMAXCONN) != 0) {
    *error = where + "cannot listen: " + strerror(errno);
    close(fd);
    return false;
  }
  out->fd = fd;
  out->bound = "unix:" + path;
  return true;
}

}  // namespace

bool ParseListenAddress(const char* address, ListenAddress* out, std::string* error) {
  const std::string text(address);
  out->text = text;
  if (text.compare(0, 5, "unix:") == 0) {
    out->unix_socket = true;
    out->path = text.substr(5);
    if (out->path.empty() || out->path[0] != '/') {
      *error = "HEAPKIT_HTTP: unix: needs an absolute path";
      return false;
    }
    if (out->path.size() >= sizeof(sockaddr_un::sun_path)) {
      *error = "HEAPKIT_HTTP: the socket path is longer than 107 bytes";
      return false;
    }
    return true;
  }
  std::string host, port_text;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) {
      *error = "HEAPKIT_HTTP: expected [address]:port";
      return false;
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      *error = "HEAPKIT_HTTP: expected host:port, :port or unix:/path";
      return false;
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  int port = 0;
  if (!ParsePort(port_text, &port)) {
    *error = "HEAPKIT_HTTP: bad port '" + Shown(port_text) + "' (1 to 5 digits, at most 65535)";
    return false;
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";  // loopback unless named
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out->tcp);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out->tcp);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    out->tcp_length = sizeof *v4;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    out->tcp_length = sizeof *v6;
  } else {
    *error = "HEAPKIT_HTTP: the host must be a numeric IPv4 or IPv6 address or localhost";
    return false;
  }
  out->loopback = web::IsLoopbackHost(host);
  return true;
}

bool OpenListener(const ListenAddress& address, Listener* out, std::string* error) {
  if (address.unix_socket) return OpenUnixListener(address.path, out, error);
  const int fd = socket(address.tcp.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("HEAPKIT_HTTP: socket: ") + strerror(errno);
    return false;
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address.tcp), address.tcp_length) != 0 ||
      listen(fd, SOMAXCONN) != 0) {
    *error = "HEAPKIT_HTTP: cannot listen on " + Shown(address.text) + ": " + strerror(errno);
    close(fd);
    return false;
  }
  sockaddr_storage actual;
  socklen_t length = sizeof actual;
  getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &length);
  char host[INET6_ADDRSTRLEN] = {};
  if (actual.ss_family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&actual);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    out->port = ntohs(v4->sin_port);
    out->bound = std::string(host) + ":" + std::to_string(out->port);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&actual);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    out->port = ntohs(v6->sin6_port);
    out->bound = "[" + std::string(host) + "]:" + std::to_string(out->port);
  }
  out->host = host;
  out->fd = fd;
  return true;
}

}  // namespace heapkit::prof::http
