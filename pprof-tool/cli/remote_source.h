// Profiles named by an http:// URL, fetched as `go tool pprof` fetches them: one HTTP/1.1 GET of
// the URL (with `seconds=N` added for --seconds), bounded in time and size. The answer is then
// read by the normal load path (proto/profile_loader.h: gzipped profile.proto, or any format a
// file may hold) from a private temporary file that is removed once loaded.
//
// Errors are one line naming the URL and the cause: the connection (refused, unreachable, timed
// out), the HTTP status with the first line of the server's message, a body over the size cap,
// or a body that is not a profile (the loader's own error).
#pragma once

#include <string>
#include <vector>

namespace heapkit::pprof {

struct RemoteFetchOptions {
  int seconds = -1;    // --seconds=N: a delta profile over N seconds (-1: not asked)
  double timeout = 0;  // --timeout=S for the whole fetch; 0: go pprof's default (60 s, or
                       // 1.5 x --seconds when given)
  size_t max_bytes = size_t{256} << 20;  // the body's cap
};

// True if the profile argument names a remote source (http:// or https://).
bool IsRemoteSource(const std::string& name);

// Fetches url into *body. False with a one-line *error on any failure.
bool FetchRemoteProfile(const std::string& url, const RemoteFetchOptions& options,
                        std::string* body, std::string* error);

// The profile arguments with each URL replaced by a temporary file holding its answer. The
// files are removed when *this is destroyed.
class FetchedSources {
 public:
  FetchedSources() = default;
  FetchedSources(const FetchedSources&) = delete;
  FetchedSources& operator=(const FetchedSources&) = delete;
  ~FetchedSources();

  // Fetches every URL of names (others are kept as they are) into paths(). False with *error on
  // the first failure.
  bool Fetch(const std::vector<std::string>& names, const RemoteFetchOptions& options,
             std::string* error);
  const std::vector<std::string>& paths() const { return paths_; }
  // message with every temporary file's path replaced by the URL it holds (for load errors).
  std::string NameSources(std::string message) const;

 private:
  std::vector<std::string> paths_;
  std::vector<std::string> temporary_, urls_;  // in step
};

}  // namespace heapkit::pprof
