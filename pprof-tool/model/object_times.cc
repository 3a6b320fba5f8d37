#include "pprof-tool/model/object_times.h"

#include <string>

#include "pprof-tool/model/comment_fields.h"

namespace heapkit::pprof {
namespace {

// A decimal followed by a blank or the end; the blanks after it are skipped.
bool ParseNumber(std::string_view* s, double* out) {
  uint64_t v = 0;
  if (!ReadDecimal(s, &v) || (!s->empty() && s->front() != ' ')) return false;
  *out = static_cast<double>(v);
  SkipSpaces(s);
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
  if (!ReadPcList(&s, &l.pcs)) return false;
  if (!s.empty()) {  // "| <free pcs>"
    s.remove_prefix(1);
    if (!ReadPcList(&s, &l.free_pcs) || !s.empty()) return false;
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
  if (!ReadPcList(&s, &a.pcs) || !s.empty()) return false;
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
