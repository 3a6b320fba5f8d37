#include "pprof-tool/report/name_pattern.h"

#include <re2/re2.h>

namespace heapkit::pprof {
namespace {

// Enough for the largest pattern the tool builds itself (the web source view's ten exact names,
// each up to kMaxMatchedNameBytes); RE2's default (8 MiB) would refuse some of those.
constexpr int64_t kMaxProgramBytes = int64_t{64} << 20;

std::string_view Prefix(std::string_view text) {
  return text.size() > kMaxMatchedNameBytes ? text.substr(0, kMaxMatchedNameBytes) : text;
}

}  // namespace

NamePattern::NamePattern() = default;
NamePattern::~NamePattern() = default;
NamePattern::NamePattern(NamePattern&&) noexcept = default;
NamePattern& NamePattern::operator=(NamePattern&&) noexcept = default;

bool NamePattern::Compile(const std::string& pattern, const char* option, std::string* error) {
  re_.reset();
  if (pattern.empty()) return true;
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(kMaxProgramBytes);
  auto re = std::make_unique<RE2>(pattern, o);
  if (!re->ok()) {
    std::string shown = pattern.size() > 200 ? pattern.substr(0, 200) + "..." : pattern;
    *error = std::string("--") + option + "=" + shown + ": invalid regular expression (" +
             re->error() + ")";
    return false;
  }
  re_ = std::move(re);
  return true;
}

bool NamePattern::Search(std::string_view text) const {
  if (!re_) return false;
  const std::string_view t = Prefix(text);
  return RE2::PartialMatch(re2::StringPiece(t.data(), t.size()), *re_);
}

std::string ExactNamePattern(std::string_view name) {
  const std::string_view p = Prefix(name);
  return "^" + RE2::QuoteMeta(re2::StringPiece(p.data(), p.size())) +
         (p.size() == name.size() ? "$" : "");
}

}  // namespace heapkit::pprof
