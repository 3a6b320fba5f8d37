// HEAPKIT_HTTP's address and the listening socket it names.
//
//   host:port, :port, [v6]:port   TCP; the host a numeric address or localhost (empty: 127.0.0.1),
//                                 never resolved; the port 1 to 5 digits, 0 picks one
//   unix:/absolute/path           a Unix socket, mode 0600. The name is never followed if it is
//                                 a link, and only a stale socket of this uid (nobody listens)
//                                 is replaced; anything else at the path, or a directory others
//                                 may write into without the sticky bit, is refused.
#pragma once

#include <sys/socket.h>

#include <string>

namespace heapkit::prof::http {

struct ListenAddress {
  std::string text;  // as given
  bool unix_socket = false;
  std::string path;  // unix_socket
  sockaddr_storage tcp = {};
  socklen_t tcp_length = 0;
  bool loopback = false;  // a TCP address other hosts cannot reach
};

// false with one line (naming HEAPKIT_HTTP) in *error.
bool ParseListenAddress(const char* text, ListenAddress* out, std::string* error);

struct Listener {
  int fd = -1;
  std::string bound;  // "127.0.0.1:6060", "[::1]:6060", "unix:/path": what the start line names
  std::string host;   // the bound numeric host without brackets (TCP)
  int port = 0;
};

// Binds and listens (non-blocking, close-on-exec). false with one line in *error.
bool OpenListener(const ListenAddress& address, Listener* out, std::string* error);

}  // namespace heapkit::prof::http
