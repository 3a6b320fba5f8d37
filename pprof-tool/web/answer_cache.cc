#include "pprof-tool/web/answer_cache.h"

namespace heapkit::pprof {

const WebResponse* AnswerCache::Find(const std::string& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return &entries_.front().second;
    }
  }
  return nullptr;
}

void AnswerCache::Insert(const std::string& key, const WebResponse& answer) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      bytes_ -= it->second.body.size();
      entries_.erase(it);
      break;
    }
  }
  if (capacity_ == 0 || answer.body.size() > max_bytes_) return;
  while (!entries_.empty() &&
         (entries_.size() >= capacity_ || bytes_ + answer.body.size() > max_bytes_)) {
    bytes_ -= entries_.back().second.body.size();
    entries_.pop_back();
  }
  entries_.emplace_front(key, answer);
  bytes_ += answer.body.size();
}

}  // namespace heapkit::pprof
