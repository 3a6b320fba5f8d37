#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

std::string RawReport(const Profile& p, Symbolizer& symbolizer, const std::string& binary) {
  // Symbol section keyed by lookup PC (callers' return addresses minus 1), like gperftools'
  // pprof --raw, so both tools read it back without the binaries.
  // Every PC of a heap profile is a return address (the leaf too), symbolized at pc - 1.
  // Keys: that lookup PC (what pprof-tool asks for) and the original return address (what
  // gperftools' pprof looks up in a symbolized profile), both with the call site's names.
  std::map<uint64_t, uint64_t> keys;  // key -> lookup pc
  for (const RawSample& s : p.samples) {
    for (uint64_t pc : s.pcs) {
      keys.emplace(pc - 1, pc - 1);
      keys.emplace(pc, pc - 1);
    }
  }
  std::string out = "--- symbol\n";
  if (!binary.empty()) out += "binary=" + binary + "\n";
  char buf[2048];
  for (const auto& [key, pc] : keys) {
    snprintf(buf, sizeof buf, "0x%016" PRIx64, key);
    out += buf;
    const char* sep = " ";
    for (const SourceFrame& f : symbolizer.Symbolize(pc)) {
      out += sep;
      out += f.function;
      sep = "--";
    }
    out += "\n";
  }
  out += "---\n";  // gperftools pprof reads the heap profile header right after this
  const char* type = "heapprofile";
  std::string kind;
  switch (p.kind) {
    case ProfileKind::kHeapV2: kind = "heap_v2/" + std::to_string(p.sample_period); break;
    case ProfileKind::kHeapV1: kind = "heap/" + std::to_string(p.sample_period); break;
    case ProfileKind::kGrowth: kind = "growth"; break;
    default: kind = type; break;
  }
  SampleValues t;
  for (const RawSample& s : p.samples) t += s.raw;
  snprintf(buf, sizeof buf, "heap profile: %6.0f: %8.0f [%6.0f: %8.0f] @ ", t.inuse_objects,
           t.inuse_bytes, t.alloc_objects, t.alloc_bytes);
  out += buf + kind + "\n";
  for (const RawSample& s : p.samples) {
    snprintf(buf, sizeof buf, "%6.0f: %8.0f [%6.0f: %8.0f] @", s.raw.inuse_objects,
             s.raw.inuse_bytes, s.raw.alloc_objects, s.raw.alloc_bytes);
    out += buf;
    for (uint64_t pc : s.pcs) {
      snprintf(buf, sizeof buf, " 0x%" PRIx64, pc);
      out += buf;
    }
    out += "\n";
  }
  out += "\nMAPPED_LIBRARIES:\n" + p.maps_text;
  return out;
}

std::string SymbolsReport(const std::vector<uint64_t>& addresses, Symbolizer& symbolizer) {
  std::string out;
  char buf[32];
  for (uint64_t a : addresses) {
    snprintf(buf, sizeof buf, "0x%016" PRIx64, a);
    out += buf;
    const char* sep = " ";
    for (const SourceFrame& f : symbolizer.Symbolize(a)) {
      out += sep;
      out += f.function;
      sep = "--";
    }
    out += "\n";
  }
  return out;
}

}  // namespace heapkit::pprof
