#include "pprof-tool/cli/remote_source.h"
#include "pprof-tool/tool_settings.h"

#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace heapkit::pprof {
namespace {

struct ParsedUrl {
  std::string host;  // without IPv6 brackets
  int port = 80;
  std::string target;  // path and query, "/" at least
};

bool ParseHttpUrl(const std::string& url, ParsedUrl* out, std::string* error) {
  const std::string scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0) {
    *error = url +
             ": only http:// URLs are fetched (https:// is not supported; fetch it with "
             "curl and give the file)";
    return false;
  }
  const size_t authority_end = url.find_first_of("/?#", scheme.size());
  const std::string authority = url.substr(scheme.size(), authority_end - scheme.size());
  std::string target = authority_end == std::string::npos ? "/" : url.substr(authority_end);
  if (const size_t hash = target.find('#'); hash != std::string::npos) target.resize(hash);
  if (target.empty() || target[0] == '?') target.insert(0, "/");
  std::string port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) {
      *error = url + ": bad host";
      return false;
    }
    out->host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        *error = url + ": bad host";
        return false;
      }
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    out->host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (out->host.empty() || out->host.find('@') != std::string::npos) {
    *error = url + ": bad host";
    return false;
  }
  if (!port_text.empty()) {
    char* end = nullptr;
    const long port = strtol(port_text.c_str(), &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535) {
      *error = url + ": bad port";
      return false;
    }
    out->port = static_cast<int>(port);
  }
  out->target = target;
  return true;
}

// go pprof's rule: --seconds replaces any seconds= of the URL.
std::string WithSeconds(const std::string& target, int seconds) {
  if (seconds < 0) return target;
  const size_t q = target.find('?');
  std::string path = target.substr(0, q);
  std::string query;
  if (q != std::string::npos) {
    const std::string old = target.substr(q + 1);
    size_t start = 0;
    while (start <= old.size()) {
      size_t amp = old.find('&', start);
      if (amp == std::string::npos) amp = old.size();
      const std::string param = old.substr(start, amp - start);
      if (!param.empty() && param.compare(0, 8, "seconds=") != 0 && param != "seconds") {
        query += query.empty() ? "" : "&";
        query += param;
      }
      start = amp + 1;
    }
  }
  query += query.empty() ? "" : "&";
  query += "seconds=" + std::to_string(seconds);
  return path + "?" + query;
}

// httplib reports a failed connect without its cause: one more attempt says which (refused,
// unreachable, timed out), bounded by the same timeout.
std::string ConnectFailure(const ParsedUrl& u, double timeout_seconds) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string port = std::to_string(u.port);
  if (const int rc = getaddrinfo(u.host.c_str(), port.c_str(), &hints, &list); rc != 0)
    return std::string("cannot resolve ") + u.host + ": " + gai_strerror(rc);
  std::string cause = "cannot connect";
  for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int err = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        const int ready = poll(&p, 1, static_cast<int>(timeout_seconds * 1000));
        socklen_t len = sizeof err;
        if (ready == 0)
          err = ETIMEDOUT;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
          err = errno;
      }
    }
    close(fd);
    if (err == 0) {
      cause = "the connection failed";  // it worked this time: the server went away meanwhile
      break;
    }
    cause = strerror(err);
    for (char& c : cause) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  }
  freeaddrinfo(list);
  return cause;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return line;
}

}  // namespace

bool IsRemoteSource(const std::string& name) {
  return name.compare(0, 7, "http://") == 0 || name.compare(0, 8, "https://") == 0;
}

namespace {

// One GET's outcome: what came back, and whether it was cut (over the cap, past the deadline).
struct Transfer {
  httplib::Result result;
  bool too_large = false;
  bool too_slow = false;
  double elapsed = 0;  // seconds
};

// GETs `target` into *body, bounded by `timeout` seconds in all and by `max_bytes`: httplib's
// own timeouts are per read, so a server that trickles bytes (a head sent a byte at a time
// too) would never trip them; a watchdog shuts the connection down at the deadline.
Transfer GetWithDeadline(const ParsedUrl& u, const std::string& target, double timeout,
                         size_t max_bytes, std::string* body) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(timeout));
  const time_t whole = static_cast<time_t>(timeout);
  const long micros = static_cast<long>((timeout - whole) * 1e6);
  httplib::Client client(u.host, u.port);
  client.set_connection_timeout(whole, micros);
  client.set_read_timeout(whole, micros);
  client.set_write_timeout(whole, micros);
  client.set_keep_alive(false);
  client.set_follow_location(false);
  client.set_decompress(false);  // the loader gunzips (bounded) what the body holds

  body->clear();
  bool too_large = false;
  std::atomic<bool> too_slow{false};
  // Returning false cancels the transfer.
  auto receive = [&](const char* data, size_t length) {
    if (body->size() + length > max_bytes) too_large = true;
    if (std::chrono::steady_clock::now() > deadline) too_slow = true;
    if (too_large || too_slow) return false;
    body->append(data, length);
    return true;
  };
  auto progress = [&](uint64_t, uint64_t) {
    if (std::chrono::steady_clock::now() > deadline) too_slow = true;
    return !too_slow;
  };
  const httplib::Headers headers = {{"Accept-Encoding", "identity"}};
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!finished.wait_until(lock, deadline, [&] { return done; })) {
      too_slow = true;
      client.stop();
    }
  });
  Transfer t{client.Get(target, headers, receive, progress)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  finished.notify_one();
  watchdog.join();
  t.too_large = too_large;
  t.too_slow = too_slow;
  t.elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

// The transfer judged: a profile's bytes in *body, or one line in *error.
bool JudgeTransfer(const std::string& url, const ParsedUrl& u, const RemoteFetchOptions& options,
                   double timeout, const Transfer& t, std::string* body, std::string* error) {
  const std::string what = "fetching " + url;
  if (t.too_large) {
    *error =
        what + ": the answer is larger than " + std::to_string(options.max_bytes >> 20) + " MiB";
    return false;
  }
  if (t.too_slow || (!t.result && t.elapsed >= timeout * 0.95)) {
    char seconds[32];
    snprintf(seconds, sizeof seconds, "%g", timeout);
    *error = what + ": timed out after " + seconds + " s (--timeout)";
    return false;
  }
  if (!t.result) {
    if (t.result.error() == httplib::Error::Connection)
      *error = what + ": " + ConnectFailure(u, timeout);
    else
      *error = what + ": " + httplib::to_string(t.result.error());
    return false;
  }
  if (t.result->status != 200) {
    const std::string message = FirstLine(body->empty() ? t.result->body : *body);
    *error = what + ": HTTP " + std::to_string(t.result->status) +
             (message.empty() ? "" : " (" + message + ")");
    return false;
  }
  if (body->empty()) *body = t.result->body;
  if (body->empty()) {
    *error = what + ": the answer is empty, not a profile";
    return false;
  }
  return true;
}

}  // namespace

bool FetchRemoteProfile(const std::string& url, const RemoteFetchOptions& options,
                        std::string* body, std::string* error) {
  ParsedUrl u;
  if (!ParseHttpUrl(url, &u, error)) return false;
  const std::string target = WithSeconds(u.target, options.seconds);
  double timeout = options.timeout;
  if (timeout <= 0) timeout = options.seconds > 0 ? options.seconds * 1.5 : 60;
  const Transfer t = GetWithDeadline(u, target, timeout, options.max_bytes, body);
  return JudgeTransfer(url, u, options, timeout, t, body, error);
}

FetchedSources::~FetchedSources() {
  for (const std::string& path : temporary_) unlink(path.c_str());
}

bool FetchedSources::Fetch(const std::vector<std::string>& names, const RemoteFetchOptions& options,
                           std::string* error) {
  for (const std::string& name : names) {
    if (!IsRemoteSource(name)) {
      paths_.push_back(name);
      continue;
    }
    std::string body;
    if (!FetchRemoteProfile(name, options, &body, error)) return false;
    const char* tmpdir = internal::ToolSettingText(ToolSetting("TMPDIR"));
    std::string path = std::string(tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp") +
                       "/pprof-tool-fetch.XXXXXX";
    const int fd = mkstemp(path.data());  // O_EXCL, mode 0600
    if (fd < 0) {
      *error = "fetching " + name + ": cannot create a temporary file: " + strerror(errno);
      return false;
    }
    temporary_.push_back(path);
    urls_.push_back(name);
    size_t done = 0;
    while (done < body.size()) {
      const ssize_t n = write(fd, body.data() + done, body.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *error = "fetching " + name + ": cannot write " + path + ": " + strerror(errno);
        close(fd);
        return false;
      }
      done += static_cast<size_t>(n);
    }
    close(fd);
    paths_.push_back(path);
  }
  return true;
}

std::string FetchedSources::NameSources(std::string message) const {
  for (size_t i = 0; i < temporary_.size(); ++i) {
    for (size_t at = message.find(temporary_[i]); at != std::string::npos;
         at = message.find(temporary_[i], at + urls_[i].size()))
      message.replace(at, temporary_[i].size(), urls_[i]);
  }
  return message;
}

}  // namespace heapkit::pprof
