#include "pprof-tool/model/memory_figures.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "pprof-tool/model/value_format.h"

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

namespace {

bool ParseSizeClassLine(std::string_view line, Profile* profile) {
  constexpr std::string_view kPrefix = "# heapkit: size_class ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return false;
  line.remove_prefix(kPrefix.size());
  Profile::SizeClassFigures c;
  struct Field {
    std::string_view name;
    uint64_t* value;
  } fields[] = {{"size", &c.size},
                {"spans", &c.spans},
                {"objects_per_span", &c.objects_per_span},
                {"out", &c.out},
                {"transfer", &c.transfer},
                {"free", &c.free},
                {"mostly_empty", &c.mostly_empty}};
  while (!line.empty()) {
    const size_t end = line.find(' ');
    std::string_view item = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view() : line.substr(end + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return false;
    uint64_t v = 0;
    const std::string_view digits = item.substr(eq + 1);
    if (digits.empty() || digits.size() > 19) return false;
    for (char ch : digits) {
      if (ch < '0' || ch > '9') return false;
      v = v * 10 + static_cast<uint64_t>(ch - '0');
    }
    for (Field& f : fields) {
      if (f.name == item.substr(0, eq)) *f.value = v;  // unknown fields: a newer writer's
    }
  }
  profile->size_classes.push_back(c);
  return true;
}

}  // namespace

bool ParseMemoryFigure(std::string_view line, Profile* profile) {
  if (ParseSizeClassLine(line, profile)) return true;
  std::vector<std::pair<std::string, uint64_t>>* figures = &profile->memory_figures;
  constexpr std::string_view kPrefix = "# heapkit: memory ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return false;
  line.remove_prefix(kPrefix.size());
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  const std::string_view key = line.substr(0, space);
  std::string_view digits = line.substr(space + 1);
  if (digits.empty() || digits.size() > 19) return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  figures->emplace_back(std::string(key), value);
  return true;
}

uint64_t MemoryFigure(const Profile& profile, std::string_view key) {
  for (const auto& [k, v] : profile.memory_figures) {
    if (k == key) return v;
  }
  return 0;
}

bool BuildMemoryTable(const Profile& profile, std::vector<MemoryRow>* rows, int64_t* rss,
                      std::string* error) {
  rows->clear();
  if (profile.memory_figures.empty()) {
    *error = profile.file +
             ": no memory figures in this profile (heapkit writes them into "
             "HEAPPROFILE dumps; gperftools and older heapkit dumps have none)";
    return false;
  }
  auto f = [&](std::string_view key) { return static_cast<int64_t>(MemoryFigure(profile, key)); };
  *rss = f("rss");
  // Live objects: the resident part of in-use spans, split into what the program asked for
  // and size-class rounding in the proportion of the recorded objects' requested bytes to their
  // usable bytes (all live objects in exact mode, an estimate from the samples otherwise; no
  // recorded object: no rounding shown).
  double requested = 0;
  for (const RawSample& s : profile.samples) requested += s.value.inuse_bytes;
  const int64_t live_exact = f("live_heap");
  // The HTTP endpoint's caches are live objects too, not the program's: their own row.
  const int64_t endpoint = f("heapkit_endpoint");
  const int64_t live_resident = f("live_heap_resident") - endpoint;
  const double recorded_usable = static_cast<double>(f("recorded_usable"));
  const double share =
      recorded_usable > 0
          ? std::clamp(static_cast<double>(f("recorded_requested")) / recorded_usable, 0.0, 1.0)
          : 1.0;
  const int64_t live_requested = static_cast<int64_t>(static_cast<double>(live_resident) * share);
  auto add = [&](const char* label, int64_t bytes, int depth = 1, bool in_rss = true) {
    rows->push_back({label, depth, bytes, in_rss, false});
  };
  auto heading = [&](const char* label) { rows->push_back({label, 0, 0, false, true}); };
  heading("Heap (allocator, resident)");
  add("live objects, requested bytes", live_requested);
  add("size-class rounding of live objects", live_resident - live_requested);
  if (endpoint > 0) add("heapkit's HTTP endpoint (its caches between answers)", endpoint);
  add("free objects in thread caches", f("thread_cache_free"));
  add("free objects in transfer caches", f("transfer_cache_free"));
  add("free objects in central lists (stranded in partly used spans)", f("central_free"));
  add("span tails (unusable ends of spans)", f("span_tails"));
  add("free pages held by the page heap (not yet returned)", f("pageheap_free_resident"));
  heading("Allocator metadata (resident)");
  add("page map", f("metadata_page_map"));
  add("arena: spans, thread caches, profiler and checker tables", f("metadata_arena"));
  heading("Not from malloc (/proc/self/smaps)");
  add("thread stacks", f("thread_stacks"));
  add("code and read-only data (file-backed)", f("code_and_ro_data"));
  add("writable file-backed data (.data, shared files)", f("file_data"));
  add("other anonymous memory (direct mmap, brk, other allocators)", f("other_anonymous"));
  int64_t explained = 0;
  for (const MemoryRow& r : *rows) {
    if (r.in_rss) explained += r.bytes;
  }
  add("unexplained", *rss - explained, 0);
  add("total RSS", *rss, 0);
  heading("Address space holding no memory (not in RSS)");
  add("pages returned to the OS (MADV_DONTNEED)", f("pageheap_returned"), 1, false);
  add("heap mapped, never touched", f("heap_untouched"), 1, false);
  add("metadata reserved, never touched",
      std::max<int64_t>(0, f("metadata_page_map_reserved") + f("metadata_arena_reserved") -
                               f("metadata_page_map") - f("metadata_arena")),
      1, false);
  add("swapped out", f("swap"), 1, false);
  heading("For reference");
  add("live heap, exact (allocator counter, usable bytes)", live_exact, 1, false);
  add("live heap, profile estimate (requested bytes)", static_cast<int64_t>(requested), 1, false);
  return true;
}

}  // namespace heapkit::pprof

namespace heapkit::pprof {

std::string SizeClassTable(const Profile& profile, size_t max_rows, bool show_bytes, int64_t rss) {
  std::vector<Profile::SizeClassFigures> classes = profile.size_classes;
  if (classes.empty()) return "";
  std::stable_sort(classes.begin(), classes.end(),
                   [](const auto& a, const auto& b) { return a.free * a.size > b.free * b.size; });
  std::string out =
      "\nSize classes by free objects stranded in partly used spans (a span returns to the page "
      "heap only when all its objects are free)\n";
  char line[256];
  snprintf(line, sizeof(line), "%8s %8s %12s %12s %12s %12s %8s\n", "size", "spans", "mostly empty",
           "objects out", "free objects", "stranded", "% of RSS");
  out += line;
  for (size_t i = 0; i < classes.size() && i < max_rows; ++i) {
    const Profile::SizeClassFigures& c = classes[i];
    const double stranded = static_cast<double>(c.free * c.size);
    snprintf(line, sizeof(line), "%8llu %8llu %12llu %12llu %12llu %12s %8s\n",
             static_cast<unsigned long long>(c.size), static_cast<unsigned long long>(c.spans),
             static_cast<unsigned long long>(c.mostly_empty),
             static_cast<unsigned long long>(c.out), static_cast<unsigned long long>(c.free),
             FormatValue(stranded, ValueUnit::kBytes, show_bytes).c_str(),
             FormatPercent(stranded, static_cast<double>(rss)).c_str());
    out += line;
  }
  out +=
      "objects out: live, or cached in thread and transfer caches; stranded: free objects x "
      "size (never-carved ones included; they may hold no memory).\n"
      "Which stacks keep them: HEAP_PROFILE_RESIDENCY=1 and --sample_index=stranded_space.\n";
  return out;
}

}  // namespace heapkit::pprof
