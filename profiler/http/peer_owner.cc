#include "profiler/http/peer_owner.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace heapkit::prof::http {
namespace {

// One end of a TCP connection, IPv4-mapped IPv6 addresses as IPv4 (a [::] listener sees IPv4
// clients so; their sockets are AF_INET ones).
struct Endpoint {
  int family = 0;
  uint32_t address[4] = {};  // network order; [0] for IPv4
  uint16_t port = 0;         // network order
};

bool ToEndpoint(const sockaddr_storage& s, Endpoint* e) {
  if (s.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&s);
    e->family = AF_INET;
    e->address[0] = v4->sin_addr.s_addr;
    e->port = v4->sin_port;
    return true;
  }
  if (s.ss_family != AF_INET6) return false;
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&s);
  e->port = v6->sin6_port;
  if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
    e->family = AF_INET;
    memcpy(&e->address[0], &v6->sin6_addr.s6_addr[12], 4);
  } else {
    e->family = AF_INET6;
    memcpy(e->address, &v6->sin6_addr, 16);
  }
  return true;
}

bool IsLoopback(const Endpoint& e) {
  if (e.family == AF_INET) return (ntohl(e.address[0]) >> 24) == 127;
  in6_addr a;
  memcpy(&a, e.address, 16);
  return IN6_IS_ADDR_LOOPBACK(&a);
}

enum class Found { kYes, kNo, kUnowned, kError };

// A socket of these states carries no owner (TIME_WAIT's mini socket reports uid 0).
bool HasOwner(unsigned state) { return state != TCP_TIME_WAIT && state != 12 /* NEW_SYN_RECV */; }

// /proc/net/tcp{,6}: the line whose local_address is `peer` and rem_address `ours`.
Found FromProcNet(const Endpoint& peer, const Endpoint& ours, uid_t* uid) {
  FILE* f = fopen(peer.family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6", "re");
  if (f == nullptr) return Found::kError;
  // The kernel prints each 32-bit word of the address as the host reads it, the port in host
  // order.
  char local[64], remote[64];
  if (peer.family == AF_INET) {
    snprintf(local, sizeof local, "%08X:%04X", peer.address[0], ntohs(peer.port));
    snprintf(remote, sizeof remote, "%08X:%04X", ours.address[0], ntohs(ours.port));
  } else {
    snprintf(local, sizeof local, "%08X%08X%08X%08X:%04X", peer.address[0], peer.address[1],
             peer.address[2], peer.address[3], ntohs(peer.port));
    snprintf(remote, sizeof remote, "%08X%08X%08X%08X:%04X", ours.address[0], ours.address[1],
             ours.address[2], ours.address[3], ntohs(ours.port));
  }
  char line[512];
  Found found = Found::kNo;
  for (int n = 0; fgets(line, sizeof line, f) != nullptr; ++n) {
    if (n > kMaxProcNetLines) {
      found = Found::kError;  // too many sockets to read: unknown, not "remote"
      break;
    }
    char l[64], r[64];
    unsigned state, owner;
    // sl local rem st tx:rx tr:when retrnsmt uid
    if (sscanf(line, " %*s %63s %63s %x %*s %*s %*s %u", l, r, &state, &owner) != 4) continue;
    if (strcmp(l, local) == 0 && strcmp(r, remote) == 0) {
      *uid = owner;
      found = HasOwner(state) ? Found::kYes : Found::kUnowned;
      break;
    }
  }
  fclose(f);
  return found;
}

}  // namespace

PeerLookup::~PeerLookup() {
  if (netlink_fd_ >= 0) close(netlink_fd_);
}

PeerOwner PeerLookup::Find(int fd) {
  PeerOwner owner;
  sockaddr_storage ours_addr, peer_addr;
  socklen_t ours_length = sizeof ours_addr, peer_length = sizeof peer_addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ours_addr), &ours_length) != 0) return owner;
  if (ours_addr.ss_family == AF_UNIX) {
    ucred cred;
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 && length == sizeof cred) {
      owner.kind = PeerOwner::Kind::kLocal;
      owner.uid = cred.uid;
    }
    return owner;
  }
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer_addr), &peer_length) != 0) return owner;
  Endpoint ours, peer;
  if (!ToEndpoint(ours_addr, &ours) || !ToEndpoint(peer_addr, &peer) ||
      ours.family != peer.family) {
    return owner;
  }
  Found found = Found::kError;
  uid_t uid = 0;
  if (netlink_ && netlink_fd_ < 0) {
    netlink_fd_ = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  }
  if (netlink_fd_ >= 0) {
    struct {
      nlmsghdr header;
      inet_diag_req_v2 request;
    } message = {};
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.header.nlmsg_seq = ++sequence_;
    message.request.sdiag_family = static_cast<uint8_t>(peer.family);
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0u;
    // The peer's socket: its source is the peer's address, its destination ours.
    message.request.id.idiag_sport = peer.port;
    message.request.id.idiag_dport = ours.port;
    memcpy(message.request.id.idiag_src, peer.address, sizeof peer.address);
    memcpy(message.request.id.idiag_dst, ours.address, sizeof ours.address);
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    sockaddr_nl kernel = {};
    kernel.nl_family = AF_NETLINK;
    if (sendto(netlink_fd_, &message, sizeof message, 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) == static_cast<ssize_t>(sizeof message)) {
      // The kernel answers within sendto; a late answer is waited for briefly, a stale one
      // (another sequence number) skipped.
      alignas(nlmsghdr) char buffer[8192];
      for (int attempt = 0; attempt < 4 && found == Found::kError; ++attempt) {
        ssize_t n = recv(netlink_fd_, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n < 0 && errno == EAGAIN) {
          pollfd p = {netlink_fd_, POLLIN, 0};
          if (poll(&p, 1, 100) <= 0) break;
          n = recv(netlink_fd_, buffer, sizeof buffer, MSG_DONTWAIT);
        }
        if (n <= 0) break;
        bool stale = true;
        for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, static_cast<size_t>(n));
             h = NLMSG_NEXT(h, n)) {
          if (h->nlmsg_seq != sequence_) continue;
          stale = false;
          if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr))) {
            const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
            found = error->error == -ENOENT ? Found::kNo : Found::kError;
          } else if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
                     h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
            const auto* entry = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
            uid = entry->idiag_uid;
            found = HasOwner(entry->idiag_state) ? Found::kYes : Found::kUnowned;
          }
          break;
        }
        if (!stale) break;
      }
    }
    if (found == Found::kError) {  // a broken socket is reopened on the next lookup
      close(netlink_fd_);
      netlink_fd_ = -1;
    }
  }
  if (found == Found::kError) found = FromProcNet(peer, ours, &uid);
  if (found == Found::kYes) {
    owner.kind = PeerOwner::Kind::kLocal;
    owner.uid = uid;
  } else if (found == Found::kNo && !IsLoopback(peer)) {
    owner.kind = PeerOwner::Kind::kRemote;
  }
  return owner;
}

}  // namespace heapkit::prof::http
