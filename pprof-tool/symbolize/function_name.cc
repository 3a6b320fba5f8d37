#include "pprof-tool/symbolize/function_name.h"

#include <cxxabi.h>

#include <cstdlib>

namespace heapkit::pprof {
namespace {

bool IsOpen(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool IsClose(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }

// True if s[0..i) ends with the keyword "operator" (so '<', '(' etc. after it are the
// operator's spelling, not brackets).
bool AfterOperator(std::string_view s, size_t i) {
  size_t j = i;
  while (j > 0 && s[j - 1] == ' ') --j;
  return j >= 8 && s.substr(j - 8, 8) == "operator";
}

}  // namespace

std::string SimplifyDemangled(std::string_view s) {
  // 1. Strip trailing qualifiers and the parameter list: find the last top-level "(...)".
  //    Scan backwards matching brackets.
  size_t end = s.size();
  while (end > 0 && s[end - 1] == ' ') --end;
  // Drop trailing " const", " volatile", "&", "&&" after the final ')'.
  size_t close = s.rfind(')', end == 0 ? 0 : end - 1);
  if (close != std::string_view::npos && end > 0) {
    std::string_view tail = s.substr(close + 1, end - close - 1);
    bool qualifiers_only = true;
    for (char c : tail) {
      if (!(c == ' ' || c == '&' || (c >= 'a' && c <= 'z'))) qualifiers_only = false;
    }
    if (qualifiers_only && tail.find("operator") == std::string_view::npos) {
      // Match back to the '(' of this parameter list.
      int depth = 0;
      size_t i = close + 1;
      while (i > 0) {
        --i;
        char c = s[i];
        if (c == ')') ++depth;
        else if (c == '(') {
          if (--depth == 0) break;
        }
      }
      if (depth == 0 && i > 0) {
        s = s.substr(0, i);
      }
    }
  }
  // 2. Drop a leading return type: the last top-level space not part of "operator X" or
  //    "(anonymous namespace)".
  int depth = 0;
  size_t cut = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (IsOpen(c) && !AfterOperator(s, i)) ++depth;
    else if (IsClose(c) && depth > 0 && !AfterOperator(s, i)) --depth;
    else if (c == ' ' && depth == 0 && !AfterOperator(s, i)) cut = i;
  }
  if (cut != std::string_view::npos && cut + 1 < s.size()) s = s.substr(cut + 1);
  return std::string(s);
}

std::string CleanFunctionName(std::string_view raw) {
  size_t at = raw.find('@');
  if (at != std::string_view::npos && at > 0) raw = raw.substr(0, at);
  if (raw.size() > 2 && raw[0] == '_' && raw[1] == 'Z') {
    std::string mangled(raw);
    int status = 0;
    char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    if (status == 0 && d != nullptr) {
      std::string out = SimplifyDemangled(d);
      free(d);
      return out;
    }
    free(d);
  }
  return std::string(raw);
}

}  // namespace heapkit::pprof
