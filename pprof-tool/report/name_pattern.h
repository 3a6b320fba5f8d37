// The regular expressions of every filter and report option (--focus --ignore --hide --show
// --show_from --drop_frames --peek --list, and the web UI's f= i= h= s= sf=): RE2, the syntax
// and semantics of Go's regexp package that go pprof's options use, so a pattern means the same
// in both tools. RE2 matches in time linear in the text, without recursion: no pattern can make
// a search take exponential time ("(.+)+#") or exhaust the stack (a megabyte-long name).
// A name longer than kMaxMatchedNameBytes is searched in its first kMaxMatchedNameBytes bytes
// (go pprof has no such cap; profile names are rarely a tenth of it): a search costs at most
// that many bytes per name, whatever the profile holds.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace heapkit::pprof {

inline constexpr size_t kMaxMatchedNameBytes = 16 << 10;

class NamePattern {
 public:
  NamePattern();
  ~NamePattern();
  NamePattern(NamePattern&&) noexcept;
  NamePattern& operator=(NamePattern&&) noexcept;

  // An empty pattern leaves the pattern inactive (matches nothing; callers test active()).
  // A bad pattern: false and one line "--<option>=<pattern>: invalid regular expression
  // (<RE2's reason>)" in *error.
  bool Compile(const std::string& pattern, const char* option, std::string* error);
  bool active() const { return re_ != nullptr; }
  // Unanchored search in the first kMaxMatchedNameBytes bytes of `text`; false when inactive.
  bool Search(std::string_view text) const;

 private:
  std::unique_ptr<re2::RE2> re_;
};

// A pattern matching exactly `name` (or, for a name longer than kMaxMatchedNameBytes, every name
// with the same first kMaxMatchedNameBytes bytes, which is what Search sees of it).
std::string ExactNamePattern(std::string_view name);

}  // namespace heapkit::pprof
