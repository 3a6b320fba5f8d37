#include "profiler/http/access_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "profiler/http/http_server.h"
#include "profiler/http/server_hooks.h"

namespace heapkit::prof::http {
namespace {

inline constexpr size_t kMinTokenBytes = 16;
inline constexpr size_t kMaxTokenBytes = 4096;

// Written on the server's thread only (Refuses), read there by /metrics.
uint64_t g_refused[static_cast<int>(RefusalReason::kCount)];

const char* Label(RefusalReason r) {
  switch (r) {
    case RefusalReason::kHost: return "host";
    case RefusalReason::kCrossSite: return "cross_site";
    case RefusalReason::kUid: return "uid";
    case RefusalReason::kUnknownPeer: return "unknown_peer";
    case RefusalReason::kRemote: return "remote";
    case RefusalReason::kToken: return "token";
    case RefusalReason::kCount: break;
  }
  return "?";
}

std::string Trimmed(std::string_view s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// A uid, or a user name looked up in the user database.
bool ParseUser(const std::string& word, uid_t* uid) {
  if (!word.empty() && word.size() <= 10 &&
      std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const unsigned long n = strtoul(word.c_str(), nullptr, 10);
    if (n >= static_cast<unsigned long>(static_cast<uid_t>(-1))) return false;
    *uid = static_cast<uid_t>(n);
    return true;
  }
  passwd entry, *found = nullptr;
  char buffer[4096];
  if (getpwnam_r(word.c_str(), &entry, buffer, sizeof buffer, &found) != 0 || found == nullptr)
    return false;
  *uid = found->pw_uid;
  return true;
}

// The bearer token: a regular file, not a link, owned by the service's uid or root, readable by
// nobody else; its content, trimmed, printable and at least kMinTokenBytes long.
bool ReadToken(const char* path, std::string* token, std::string* error) {
  const std::string where = std::string("HEAPKIT_HTTP_TOKEN_FILE=") + path;
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    *error = where + ": " + (errno == ELOOP ? "a symbolic link" : strerror(errno));
    return false;
  }
  struct stat st;
  std::string text;
  bool ok = false;
  if (fstat(fd, &st) != 0) {
    *error = where + ": " + strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    *error = where + ": not a regular file";
  } else if (st.st_uid != 0 && st.st_uid != getuid() && st.st_uid != geteuid()) {
    *error = where + ": owned by uid " + std::to_string(st.st_uid) +
             ", not by the service's uid or root";
  } else if ((st.st_mode & 077) != 0) {
    *error = where + ": readable or writable by group or others (chmod 600 it)";
  } else if (st.st_size > static_cast<off_t>(kMaxTokenBytes)) {
    *error = where + ": larger than 4096 bytes";
  } else {
    char buffer[kMaxTokenBytes + 1];
    ssize_t n;
    while (text.size() <= kMaxTokenBytes && (n = read(fd, buffer, sizeof buffer)) > 0) {
      text.append(buffer, static_cast<size_t>(n));
    }
    text = Trimmed(text);
    const bool printable =
        std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (text.size() < kMinTokenBytes || text.size() > kMaxTokenBytes || !printable) {
      *error = where + ": the token must be 16 to 4096 printable bytes without spaces";
    } else {
      ok = true;
    }
  }
  close(fd);
  if (ok) *token = std::move(text);
  return ok;
}

// Equal in time independent of where they differ (the length is not secret).
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// The credentials of `Authorization: Bearer <credentials>`; "" for any other header.
std::string_view BearerCredentials(std::string_view header) {
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size() || strncasecmp(header.data(), "bearer ", 7) != 0) return "";
  header.remove_prefix(kScheme.size());
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  return header;
}

}  // namespace

bool AccessPolicy::Configure(const ServerHooks& hooks, bool other_hosts_reach, std::string* error) {
  uids_ = {0, getuid(), geteuid()};
  if (hooks.allow_users != nullptr) {
    std::string_view list = hooks.allow_users;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string word = Trimmed(list.substr(0, comma));
      list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
      if (word.empty()) continue;
      uid_t uid;
      if (!ParseUser(word, &uid)) {
        std::string shown = word.substr(0, 64);
        for (char& c : shown) c = (c >= 0x20 && c < 0x7f) ? c : '?';
        *error = "HEAPKIT_HTTP_ALLOW_USERS: no such user: " + shown;
        return false;
      }
      uids_.push_back(uid);
    }
  }
  std::sort(uids_.begin(), uids_.end());
  uids_.erase(std::unique(uids_.begin(), uids_.end()), uids_.end());
  if (hooks.token_file != nullptr && hooks.token_file[0] != '\0') {
    if (!ReadToken(hooks.token_file, &token_, error)) return false;
    token_file_ = hooks.token_file;
  }
  if (hooks.allow_remote != nullptr && hooks.allow_remote[0] != '\0') {
    const std::string_view v = hooks.allow_remote;
    if (v == "1" || v == "true" || v == "yes" || v == "on") {
      allow_remote_ = true;
    } else if (!(v == "0" || v == "false" || v == "no" || v == "off")) {
      *error = "HEAPKIT_HTTP_ALLOW_REMOTE: expected 1 or 0";
      return false;
    }
  }
  other_hosts_reach_ = other_hosts_reach;
  if (other_hosts_reach && token_.empty() && !allow_remote_) {
    *error =
        "HEAPKIT_HTTP: other hosts can reach this address: set HEAPKIT_HTTP_TOKEN_FILE, or "
        "HEAPKIT_HTTP_ALLOW_REMOTE=1 to answer any client of another host";
    return false;
  }
  return true;
}

std::string AccessPolicy::Description() const {
  std::string out = "clients: ";
  bool first = true;
  for (uid_t uid : uids_) {
    if (uid == 0) continue;  // named last
    out += (first ? "uid " : ", uid ") + std::to_string(uid);
    first = false;
  }
  out += first ? "root" : ", root";
  out += "; token: " + (token_.empty() ? std::string("none") : token_file_);
  if (other_hosts_reach_) {
    out += allow_remote_ ? "; other hosts: any client" : "; other hosts: with the token";
  }
  return out;
}

bool AccessPolicy::AllowedUid(uid_t uid) const {
  return std::binary_search(uids_.begin(), uids_.end(), uid);
}

bool AccessPolicy::Admits(const PeerOwner& peer, std::string_view authorization,
                          RefusalReason* reason, std::string* line) const {
  const std::string_view credentials = BearerCredentials(authorization);
  if (!token_.empty() && !credentials.empty()) {
    if (ConstantTimeEquals(credentials, token_)) return true;
    *reason = RefusalReason::kToken;
    *line = "refused: wrong bearer token";
    return false;
  }
  switch (peer.kind) {
    case PeerOwner::Kind::kLocal:
      if (AllowedUid(peer.uid)) return true;
      *reason = RefusalReason::kUid;
      *line = "refused: uid " + std::to_string(peer.uid) +
              " may not read this process (HEAPKIT_HTTP_ALLOW_USERS, or a bearer token)";
      return false;
    case PeerOwner::Kind::kRemote:
      if (allow_remote_) return true;
      *reason = RefusalReason::kRemote;
      *line = "refused: a client of another host needs the bearer token";
      return false;
    case PeerOwner::Kind::kUnknown: break;
  }
  *reason = RefusalReason::kUnknownPeer;
  *line = "refused: the owner of this connection cannot be known";
  return false;
}

bool Admission::Refuses(const Request& request, bool side_effect, Response* refusal) const {
  RefusalReason reason = RefusalReason::kCount;
  std::string line;
  int status = 403;
  // Who asks first, then what the request looks like.
  if (policy_.Admits(request.peer, request.authorization, &reason, &line)) {
    const web::RequestHeaders headers{request.host, request.origin, request.sec_fetch_site,
                                      request.referer};
    switch (guard_.Judge(headers, side_effect, &line)) {
      case web::RequestGuard::Verdict::kAnswer: return false;
      case web::RequestGuard::Verdict::kWrongHost:
        reason = RefusalReason::kHost;
        status = 421;
        break;
      case web::RequestGuard::Verdict::kCrossSite: reason = RefusalReason::kCrossSite; break;
    }
  }
  g_refused[static_cast<int>(reason)] += 1;
  refusal->status = status;
  refusal->content_type = "text/plain; charset=utf-8";
  refusal->body = "heapkit: " + line + "\n";
  return true;
}

std::string RefusalMetricsText() {
  std::string out =
      "# HELP heapkit_http_refused_requests_total Requests the HTTP endpoint refused, by "
      "reason.\n# TYPE heapkit_http_refused_requests_total counter\n";
  for (int r = 0; r < static_cast<int>(RefusalReason::kCount); ++r) {
    out += std::string("heapkit_http_refused_requests_total{reason=\"") +
           Label(static_cast<RefusalReason>(r)) + "\"} " + std::to_string(g_refused[r]) + "\n";
  }
  return out;
}

}  // namespace heapkit::prof::http
