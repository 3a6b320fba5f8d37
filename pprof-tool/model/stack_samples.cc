#include "pprof-tool/model/stack_samples.h"

#include <cinttypes>
#include <cstdio>

namespace heapkit::pprof {

static std::string Base(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

std::string NodeInfo::FullLabel() const {
  if (full_name.empty()) return Label();
  NodeInfo full = *this;
  full.name = full_name;
  return full.Label();
}

std::string NodeInfo::Label() const {
  std::string out;
  if (address != 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIx64 " ", address);
    out = buf;
  }
  out += name;
  if (line > 0 && !file.empty() && name != file) {
    out += ' ';
    out += Base(file);
    out += ':';
    out += std::to_string(line);
  }
  return out;
}

std::string StackSamples::FoldedWrappersLine() const {
  if (folded_wrappers.empty()) return "";
  std::string line = "Allocation wrappers charged to their callers: ";
  for (size_t i = 0; i < folded_wrappers.size(); ++i) line += (i ? ", " : "") + folded_wrappers[i];
  return line + " (--keep_allocator_frames shows them)";
}

}  // namespace heapkit::pprof
