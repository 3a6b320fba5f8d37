// The web UI's last answers, so that going back and forth between views costs nothing.
// Keyed by the view's path and its normalized query (ViewQuery::Encode after parsing, so
// "?si=inuse_space" and "" with inuse_space the default are one key). The loaded profiles never
// change while the server runs, so an answer stays right for as long as it is kept; only
// successful answers are kept. Bounded twice: at most `capacity` answers and `max_bytes` of
// bodies in all (the least recently used go first; a body larger than max_bytes is not kept).
// Not thread-safe (the server serializes requests).
#pragma once

#include <cstddef>
#include <list>
#include <string>
#include <utility>

#include "pprof-tool/web/web_response.h"

namespace heapkit::pprof {

class AnswerCache {
 public:
  AnswerCache(size_t capacity, size_t max_bytes) : capacity_(capacity), max_bytes_(max_bytes) {}

  // The kept answer for `key` (now the most recently used), or nullptr.
  const WebResponse* Find(const std::string& key);
  void Insert(const std::string& key, const WebResponse& answer);

  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  size_t capacity_, max_bytes_, bytes_ = 0;
  std::list<std::pair<std::string, WebResponse>> entries_;  // most recently used first
};

}  // namespace heapkit::pprof
