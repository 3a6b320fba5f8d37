// Who may read the endpoint (http_server.h), decided per request before any route runs.
//
// Trust model (profiler/README.md, "Trust model"): the answers hold what only the service's
// owner may see — the address layout (/proc/self/maps), every sampled stack, the command line
// with its secrets — and some endpoints act (a leak check stops the program's threads;
// delta_heap moves its baseline). So a request is answered when
//   1. its connection comes from the service's own uid (real or effective, at start), root, or
//      a uid of HEAPKIT_HTTP_ALLOW_USERS (peer_owner.h: SO_PEERCRED on a Unix socket, the
//      kernel's socket table on TCP; an owner that cannot be known is refused), or it carries
//      `Authorization: Bearer <the token in HEAPKIT_HTTP_TOKEN_FILE>` (a wrong token is refused
//      whoever sends it); a connection from another host needs the token, unless
//      HEAPKIT_HTTP_ALLOW_REMOTE=1 accepts any (a connection from this host, even to a
//      non-loopback address, still gets the uid rule);
//   2. and it passes the origin rule (request_guard.h): its Host names this server (421
//      otherwise), and it comes from no other site (403).
// Each refusal is one line and counted by reason in /metrics (RefusalMetricsText).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/http/peer_owner.h"
#include "profiler/http/request_guard.h"

namespace heapkit::prof::http {

struct Request;
struct Response;
struct ServerHooks;

// The refusal counters' labels in /metrics.
enum class RefusalReason { kHost, kCrossSite, kUid, kUnknownPeer, kRemote, kToken, kCount };

class AccessPolicy {
 public:
  // The settings from hooks (allow_users, token_file, allow_remote); `other_hosts_reach`: the
  // bound address is not loopback. false with one line in *error (the endpoint stays off): a
  // bad setting, a token file that is not private, or a reachable bind with neither a token
  // nor HEAPKIT_HTTP_ALLOW_REMOTE.
  bool Configure(const ServerHooks& hooks, bool other_hosts_reach, std::string* error);

  // "clients: uid 1000, root; token: none" (and "; other hosts: …" when they can reach it).
  std::string Description() const;

  // true to answer; else *reason and one line in *line.
  bool Admits(const PeerOwner& peer, std::string_view authorization, RefusalReason* reason,
              std::string* line) const;

 private:
  bool AllowedUid(uid_t uid) const;

  std::vector<uid_t> uids_;  // sorted, root among them
  std::string token_;        // empty: none
  std::string token_file_;
  bool other_hosts_reach_ = false;
  bool allow_remote_ = false;
};

// The policy and the origin rule of one server.
class Admission {
 public:
  Admission(AccessPolicy policy, web::RequestGuard guard)
      : policy_(std::move(policy)), guard_(std::move(guard)) {}

  // true, with the answer (403 or 421, one line) in *refusal, when `request` must not be
  // answered; `side_effect`: the endpoint acts (request_guard.h). Counts the refusal.
  bool Refuses(const Request& request, bool side_effect, Response* refusal) const;

  const AccessPolicy& policy() const { return policy_; }

 private:
  AccessPolicy policy_;
  web::RequestGuard guard_;
};

// heapkit_http_refused_requests_total{reason="…"}, every reason (zeros included).
std::string RefusalMetricsText();

}  // namespace heapkit::prof::http
