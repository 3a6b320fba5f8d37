// Cuts a real heap profile at EVERY byte offset and checks what the parser makes of each prefix
// (run_robustness.py generates the profile and runs this on it):
//   - a cut inside a line (the prefix does not end in '\n') is always named: either an error
//     on that line or a warning on that line, both saying "truncated?"; the cut line's data is
//     never used (a half-written address would otherwise be symbolized as a wrong one);
//   - other files: a cut at a line boundary never says "truncated?"; after the header it parses,
//   keeping
//     exactly the complete sample lines before the cut;
//   - every error message is one line starting "<file>:<line>: ";
//   - a heapkit HEAPPROFILE dump (it ends with "# heapkit: end of dump") cut anywhere, at a
//     line boundary too, is an error saying "truncated?" (its end line is missing).
// Prints one line per violation (the first 20) and a summary; exit 1 on any violation.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "pprof-tool/parse/legacy_parser.h"

using heapkit::pprof::ParseError;
using heapkit::pprof::ParseProfileText;
using heapkit::pprof::Profile;

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: truncation_check <complete profile>\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.empty() || text.back() != '\n') {
    fprintf(stderr, "truncation_check: %s is not a complete profile\n", argv[1]);
    return 2;
  }
  // Line number of each byte, and the number of sample lines completed before each offset.
  const size_t maps_at = text.find("\nMAPPED_LIBRARIES:");
  // heapkit's HEAPPROFILE dumps end with this line: any shorter prefix is truncated.
  const bool heapkit_dump = text.find("\n# heapkit: end of dump\n") != std::string::npos;
  int violations = 0, errors = 0, warnings = 0, clean = 0;
  auto violation = [&](size_t cut, const std::string& what) {
    if (++violations <= 20) printf("cut at byte %zu: %s\n", cut, what.c_str());
  };
  int line_of_cut = 1;     // line holding byte cut-1
  int samples_before = 0;  // complete sample lines in text[0, cut)
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    if (cut >= 2 && text[cut - 2] == '\n') ++line_of_cut;
    if (cut >= 1 && text[cut - 1] == '\n' && line_of_cut > 1 &&
        (maps_at == std::string::npos || cut - 1 < maps_at) &&
        text.find('@', text.rfind('\n', cut - 2) + 1) < cut - 1)
      ++samples_before;
    const std::string prefix = text.substr(0, cut);
    Profile p;
    ParseError e;
    const bool ok = ParseProfileText(prefix, "t.heap", &p, &e);
    const bool at_boundary = cut == 0 || text[cut - 1] == '\n';
    const std::string tag = "t.heap:" + std::to_string(line_of_cut) + ": ";
    std::string said;
    if (!ok) {
      ++errors;
      said = e.Message();
      if (said.find('\n') != std::string::npos) violation(cut, "multi-line error: " + said);
      if (said.rfind("t.heap:", 0) != 0) violation(cut, "error does not name file:line: " + said);
    } else {
      for (const std::string& w : p.warnings) said += w + "\n";
      p.warnings.empty() ? ++clean : ++warnings;
    }
    const bool truncated = said.find("truncated?") != std::string::npos;
    if (heapkit_dump && cut > 0 && cut < text.size()) {
      // Every cut of a heapkit dump is an error naming the truncation, one line.
      if (ok || !truncated) violation(cut, "cut dump not refused as truncated: '" + said + "'");
      if (!at_boundary && said.find(tag) == std::string::npos)
        violation(cut, "mid-line cut of line " + std::to_string(line_of_cut) + " not named: '" +
                           said + "'");
    } else if (at_boundary) {
      if (truncated) violation(cut, "line boundary reported as truncated: " + said);
      if (cut > text.find('\n') && !ok) violation(cut, "line boundary does not parse: " + said);
      // Sample lines are counted up to the memory map; header line excluded.
      if (ok && cut > text.find('\n') && static_cast<int>(p.samples.size()) != samples_before)
        violation(cut, "kept " + std::to_string(p.samples.size()) + " samples, want " +
                           std::to_string(samples_before));
    } else {
      if (!truncated || said.find(tag) == std::string::npos)
        violation(cut, "mid-line cut of line " + std::to_string(line_of_cut) +
                           " not reported as truncated: '" + said + "'");
      if (ok && static_cast<int>(p.samples.size()) != samples_before)
        violation(cut, "kept " + std::to_string(p.samples.size()) + " samples, want " +
                           std::to_string(samples_before) + " (the cut line must be dropped)");
    }
  }
  printf("%zu cuts: %d errors, %d parsed with a warning, %d parsed cleanly; %d violations\n",
         text.size() + 1, errors, warnings, clean, violations);
  return violations == 0 ? 0 : 1;
}
