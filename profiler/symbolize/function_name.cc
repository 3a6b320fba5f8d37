#include "profiler/symbolize/function_name.h"

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

// Length of the operator token that starts at s[i] right after "operator" (e.g. "<<=", "->*",
// "()"), so its '<', '>' and '(' are not read as brackets.
size_t OperatorTokenLength(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && s[j] == ' ') ++j;
  size_t start = j;
  if (s.substr(j, 2) == "()" || s.substr(j, 2) == "[]") return j + 2 - i;
  while (j < s.size() && j - start < 3 &&
         std::string_view("<>=!+-*/%^&|~,").find(s[j]) != std::string_view::npos)
    ++j;
  return j - i;
}

}  // namespace

std::string SimplifiedFunctionName(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  int angle = 0;  // depth of template argument lists being dropped
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (angle == 0 && c == 'o' && s.substr(i, 8) == "operator" &&
        (i == 0 || s[i - 1] == ':' || s[i - 1] == ' ')) {
      size_t n = 8 + OperatorTokenLength(s, i + 8);
      out.append(s.substr(i, n));
      i += n;
    } else if (angle == 0 && c == '{') {
      size_t close = s.find('}', i);  // "{lambda(int)#1}": kept whole
      size_t n = close == std::string_view::npos ? s.size() - i : close + 1 - i;
      out.append(s.substr(i, n));
      i += n;
    } else if (c == '<') {
      ++angle;
      ++i;
    } else if (c == '>' && angle > 0) {
      --angle;
      ++i;
    } else {
      if (angle == 0) out += c;
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string FullFunctionName(const SourceFrame& frame) {
  const char* raw = frame.linkage_name;
  if (raw == nullptr || raw[0] != '_' || raw[1] != 'Z') return frame.function;
  std::string mangled(raw);
  size_t at = mangled.find('@');
  if (at != std::string::npos) mangled.resize(at);
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? std::string(d) : frame.function;
  free(d);
  return out;
}

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
        if (c == ')')
          ++depth;
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
    if (IsOpen(c) && !AfterOperator(s, i))
      ++depth;
    else if (IsClose(c) && depth > 0 && !AfterOperator(s, i))
      --depth;
    else if (c == ' ' && depth == 0 && !AfterOperator(s, i))
      cut = i;
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
