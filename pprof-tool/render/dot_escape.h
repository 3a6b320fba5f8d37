// Quoting for DOT string literals and for labels that graphviz interprets.
//
// Every string we put in a DOT file goes through QuoteDot(): the result is a complete
// double-quoted literal that graphviz reads back as exactly the characters we meant, whatever
// the input (C++ names carry < > { } | " \ and sometimes newlines or invalid UTF-8):
//   "  -> \"        the only character that ends a quoted literal
//   \  -> \\        graphviz would otherwise read \N \G \E \L \l \r \n as escapes
//   newline -> \n   (a centred line break in a label), other control bytes -> space
//   invalid UTF-8   -> '?' (graphviz assumes UTF-8 and warns/garbles otherwise)
// { } | < > need no escaping inside a quoted label because we never use record shapes or
// HTML-like (<...>) labels. Callers build a label as plain text with '\n' between lines and
// quote it once; a newline inside a name thus becomes one more (harmless) line break.
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// The body of a quoted literal (no surrounding quotes).
std::string EscapeDotBody(std::string_view text);

// A complete quoted literal: '"' + EscapeDotBody(text) + '"'.
std::string QuoteDot(std::string_view text);

// Replaces invalid UTF-8 sequences with '?'. Valid input is returned unchanged.
std::string SanitizeUtf8(std::string_view text);

// Shortens a (demangled) function name for a node label: names longer than max_line are split
// into '\n'-separated lines at top-level "::" boundaries (outside <...> and (...)); the whole
// result is capped at max_total bytes with "..." at the end. Unescaped: quote it afterwards.
std::string WrapFunctionName(std::string_view name, size_t max_line = 40, size_t max_total = 160);

}  // namespace heapkit::pprof
