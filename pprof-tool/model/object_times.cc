#include "pprof-tool/model/object_times.h"

#include <string>

namespace heapkit::pprof {
namespace {

bool ParseNumber(std::string_view* s, double* out) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s->size() && i < 19 && (*s)[i] >= '0' && (*s)[i] <= '9') {
    v = v * 10 + static_cast<uint64_t>((*s)[i] - '0');
    ++i;
  }
  if (i == 0 || (i < s->size() && (*s)[i] != ' ')) return false;
  *out = static_cast<double>(v);
  s->remove_prefix(i);
  while (!s->empty() && s->front() == ' ') s->remove_prefix(1);
  return true;
}

bool ParseWord(std::string_view* s, std::string_view* word) {
  size_t end = s->find(' ');
  if (end == 0 || end == std::string_view::npos) return false;
  *word = s->substr(0, end);
  s->remove_prefix(end);
  while (!s->empty() && s->front() == ' ') s->remove_prefix(1);
  return true;
}

// "0x<hex> 0x<hex> ..." up to the end or a '|'.
bool ParsePcs(std::string_view* s, std::vector<uint64_t>* pcs) {
  for (;;) {
    while (!s->empty() && s->front() == ' ') s->remove_prefix(1);
    if (s->empty() || s->front() == '|') return true;
    if (s->substr(0, 2) != "0x") return false;
    s->remove_prefix(2);
    uint64_t pc = 0;
    size_t digits = 0;
    while (!s->empty() && digits < 16) {
      const char c = s->front();
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) break;
      pc = pc * 16 + static_cast<uint64_t>(d);
      s->remove_prefix(1);
      ++digits;
    }
    if (digits == 0) return false;
    pcs->push_back(pc);
  }
}

bool ParseLifetime(std::string_view s, ObjectTimes* times) {
  LifetimeLine l;
  double bin;
  std::string_view end;
  if (!ParseNumber(&s, &bin) || !ParseWord(&s, &end) || !ParseNumber(&s, &l.count) ||
      !ParseNumber(&s, &l.bytes) || !ParseNumber(&s, &l.estimated_bytes) || s.substr(0, 1) != "@")
    return false;
  l.bin_ns = static_cast<uint64_t>(bin);
  if (end == "same") {
    l.end = LifetimeLine::End::kSameThread;
  } else if (end == "cross") {
    l.end = LifetimeLine::End::kOtherThread;
  } else if (end == "live") {
    l.end = LifetimeLine::End::kLive;
  } else {
    return false;
  }
  s.remove_prefix(1);
  if (!ParsePcs(&s, &l.pcs)) return false;
  if (!s.empty()) {  // "| <free pcs>"
    s.remove_prefix(1);
    if (!ParsePcs(&s, &l.free_pcs) || !s.empty()) return false;
  }
  times->lifetimes.push_back(std::move(l));
  return true;
}

bool ParseAge(std::string_view s, ObjectTimes* times) {
  AgeLine a;
  double interval;
  if (!ParseNumber(&s, &interval) || !ParseNumber(&s, &a.count) || !ParseNumber(&s, &a.bytes) ||
      s.substr(0, 1) != "@")
    return false;
  s.remove_prefix(1);
  if (!ParsePcs(&s, &a.pcs) || !s.empty()) return false;
  a.interval = static_cast<uint32_t>(interval);
  times->ages.push_back(std::move(a));
  return true;
}

}  // namespace

bool ParseObjectTimeLine(std::string_view line, ObjectTimes* times) {
  constexpr std::string_view kLifetime = "# heapkit: lifetime ";
  constexpr std::string_view kAgesAt = "# heapkit: ages at dump ";
  constexpr std::string_view kAge = "# heapkit: age ";
  if (line.substr(0, kLifetime.size()) == kLifetime)
    return ParseLifetime(line.substr(kLifetime.size()), times);
  if (line.substr(0, kAgesAt.size()) == kAgesAt) {
    std::string_view rest = line.substr(kAgesAt.size());
    double n;
    if (!ParseNumber(&rest, &n) || !rest.empty()) return false;
    times->ages_dump = static_cast<int>(n);
    return true;
  }
  if (line.substr(0, kAge.size()) == kAge) return ParseAge(line.substr(kAge.size()), times);
  return false;
}

}  // namespace heapkit::pprof
