// Who is at the other end of a connection the endpoint accepted (access_policy.h decides what
// they may read).
//
// A Unix socket: SO_PEERCRED. TCP: the kernel's table of sockets, asked for the one socket whose
// local end is the peer's address and whose remote end is ours — found, it is a socket of this
// host (of this network namespace) and its owner is the uid that created it; not found, the
// peer is on another host. The question goes to sock_diag (NETLINK_SOCK_DIAG, one exact
// inet_diag_req_v2 lookup by the 4-tuple: O(1), whatever the number of sockets); where netlink
// is unavailable (a seccomp filter, a kernel without it) /proc/net/tcp{,6} is read instead, at
// most kMaxProcNetLines lines. Any doubt is kUnknown, which the policy refuses: a loopback
// address whose socket cannot be found (the client left, or lives in another namespace) is
// unknown too, never "remote"; so is a socket in TIME_WAIT, which the kernel reports as uid 0.
#pragma once

#include <sys/types.h>

namespace heapkit::prof::http {

inline constexpr int kMaxProcNetLines = 100000;

struct PeerOwner {
  enum class Kind { kLocal, kRemote, kUnknown };
  Kind kind = Kind::kUnknown;
  uid_t uid = 0;  // kLocal only
};

// Holds the netlink socket between lookups (opened on first use, reopened after an error).
// Used by the server's thread only.
class PeerLookup {
 public:
  // `netlink` false: /proc/net/tcp{,6} only, what a process without netlink gets (tests).
  explicit PeerLookup(bool netlink = true) : netlink_(netlink) {}
  PeerLookup(const PeerLookup&) = delete;
  PeerLookup& operator=(const PeerLookup&) = delete;
  ~PeerLookup();

  PeerOwner Find(int connection_fd);

 private:
  bool netlink_;
  int netlink_fd_ = -1;
  unsigned sequence_ = 0;
};

}  // namespace heapkit::prof::http
