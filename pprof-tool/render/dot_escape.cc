#include "dot_escape.h"

#include <cstdint>

namespace heapkit::pprof {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) return 1;
  size_t n;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += '?';
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string EscapeDotBody(std::string_view text) {
  const std::string clean = SanitizeUtf8(text);
  std::string out;
  out.reserve(clean.size() + 8);
  for (const char c : clean) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string QuoteDot(std::string_view text) { return '"' + EscapeDotBody(text) + '"'; }

std::string WrapFunctionName(std::string_view name, size_t max_line, size_t max_total) {
  std::string capped(name.substr(0, max_total));
  if (name.size() > max_total) {
    // Do not cut a UTF-8 sequence in half.
    while (!capped.empty() && (static_cast<unsigned char>(capped.back()) & 0xC0) == 0x80) {
      capped.pop_back();
    }
    if (!capped.empty() && static_cast<unsigned char>(capped.back()) >= 0xC0) capped.pop_back();
    capped += "...";
  }
  if (capped.size() <= max_line) return capped;

  std::string out;
  size_t line_len = 0;
  int depth = 0;  // nesting of <...> and (...)
  for (size_t i = 0; i < capped.size(); ++i) {
    const char c = capped[i];
    out += c;
    ++line_len;
    if (c == '\n') line_len = 0;
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    // Break after a top-level "::" once the line is long enough to be worth breaking.
    if (c == ':' && i > 0 && capped[i - 1] == ':' && depth == 0 && line_len >= max_line / 2 &&
        i + 1 < capped.size()) {
      out += '\n';
      line_len = 0;
    }
  }
  return out;
}

}  // namespace heapkit::pprof
