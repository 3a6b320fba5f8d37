#include "profiler/http/metrics_text.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "profiler/symbolize/build_id.h"

#ifndef HEAPKIT_VERSION
#error "HEAPKIT_VERSION is defined by the build (profiler/CMakeLists.txt)"
#endif

namespace heapkit::prof::http {
namespace {

void Metric(std::string* out, const char* name, const char* type, const char* help, double value) {
  char line[512];
  snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type,
           name, value);
  *out += line;
}

// One family: HELP and TYPE, then a line per labelled value.
void Family(std::string* out, const char* name, const char* type, const char* help) {
  char line[640];
  snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
  *out += line;
}

void Labelled(std::string* out, const char* name, const char* labels, double value) {
  char line[512];
  snprintf(line, sizeof line, "%s{%s} %.17g\n", name, labels, value);
  *out += line;
}

size_t Property(NumericProperty property, const char* name) {
  size_t value = 0;
  return property(name, &value) ? value : 0;
}

// Resident set size from /proc/self/statm (pages → bytes); 0 if unreadable.
double ResidentBytes() {
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128] = {};
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  unsigned long long size = 0, resident = 0;
  if (sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// The whole text of a small /proc file ("" if unreadable).
std::string ReadSmallFile(const char* path) {
  std::string text;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n;
  while (text.size() < (1 << 16) && (n = read(fd, buf, sizeof buf)) > 0) {
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

// When the process started, in seconds since the epoch: /proc/self/stat's starttime (clock ticks
// after boot, field 22) plus /proc/stat's btime. 0 if either is unreadable.
double ProcessStartSeconds() {
  const std::string stat = ReadSmallFile("/proc/self/stat");
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return 0;
  const char* p = stat.c_str() + paren + 1;
  for (int field = 2; field < 21 && *p != '\0'; ++field) {  // to the space before field 22
    ++p;
    while (*p != ' ' && *p != '\0') ++p;
  }
  char* end = nullptr;
  const unsigned long long ticks = strtoull(p, &end, 10);
  if (end == p) return 0;
  const std::string system = ReadSmallFile("/proc/stat");
  const size_t at = system.find("\nbtime ");
  if (at == std::string::npos) return 0;
  const unsigned long long boot = strtoull(system.c_str() + at + 7, nullptr, 10);
  const long hz = sysconf(_SC_CLK_TCK);
  if (boot == 0 || hz <= 0) return 0;
  return static_cast<double>(boot) + static_cast<double>(ticks) / static_cast<double>(hz);
}

// The build ID of the runtime: the object that holds the allocator's `property` function
// (libheapkit.so, or the program it is linked into; this code may be in the on-demand
// library), read once.
const std::string& RuntimeBuildId(NumericProperty property) {
  static const std::string* id = [property] {
    Dl_info info{};
    const bool found = property != nullptr &&
                       dladdr(reinterpret_cast<void*>(property), &info) != 0 &&
                       info.dli_fname != nullptr && info.dli_fname[0] == '/';
    return new std::string(found ? pprof::ReadBuildIdHex(info.dli_fname) : "");
  }();
  return *id;
}

// The resident parts of RSS, from memory_breakdown.h's keys (pprof-tool --memory's rows).
void ResidentParts(std::string* out, std::string_view figures, uint64_t endpoint_bytes) {
  struct Part {
    const char* label;
    const char* key;
  };
  static constexpr Part kParts[] = {
      {"thread_cache_free", "thread_cache_free"},  {"transfer_cache_free", "transfer_cache_free"},
      {"central_cache_free", "central_free"},      {"span_tails", "span_tails"},
      {"pageheap_free", "pageheap_free_resident"}, {"metadata_page_map", "metadata_page_map"},
      {"metadata_arena", "metadata_arena"},        {"thread_stacks", "thread_stacks"},
      {"code_and_ro_data", "code_and_ro_data"},    {"file_data", "file_data"},
      {"other_anonymous", "other_anonymous"},
  };
  Family(out, "heapkit_resident_memory_bytes", "gauge",
         "Resident bytes of the process by what holds them (pprof-tool --memory's rows); the "
         "parts add up to process_resident_memory_bytes but for what none explains.");
  uint64_t live = 0;
  MemoryFigure(figures, "live_heap_resident", &live);
  const uint64_t endpoint = endpoint_bytes < live ? endpoint_bytes : live;
  Labelled(out, "heapkit_resident_memory_bytes", "part=\"live_heap\"",
           static_cast<double>(live - endpoint));
  Labelled(out, "heapkit_resident_memory_bytes", "part=\"heapkit_endpoint\"",
           static_cast<double>(endpoint));
  for (const Part& part : kParts) {
    uint64_t bytes = 0;
    MemoryFigure(figures, part.key, &bytes);
    char labels[64];
    snprintf(labels, sizeof labels, "part=\"%s\"", part.label);
    Labelled(out, "heapkit_resident_memory_bytes", labels, static_cast<double>(bytes));
  }
}

}  // namespace

bool MemoryFigure(std::string_view figures, std::string_view key, uint64_t* bytes) {
  static constexpr std::string_view kPrefix = "# heapkit: memory ";
  while (!figures.empty()) {
    const size_t nl = figures.find('\n');
    std::string_view line = figures.substr(0, nl);
    figures.remove_prefix(nl == std::string_view::npos ? figures.size() : nl + 1);
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    line.remove_prefix(kPrefix.size());
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') {
      continue;
    }
    uint64_t v = 0;
    for (char c : line.substr(key.size() + 1)) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    *bytes = v;
    return true;
  }
  return false;
}

std::string MetricsText(const MetricsInput& input) {
  std::string out;
  const NumericProperty property = input.property;
  const HeapTotals* totals = input.totals;
  const std::string_view figures = input.memory_figures;
  const double endpoint = static_cast<double>(input.endpoint_heap_bytes);
  const double allocated =
      static_cast<double>(Property(property, "generic.current_allocated_bytes"));
  const double inuse = allocated > endpoint ? allocated - endpoint : 0;
  const double reserved = static_cast<double>(Property(property, "generic.heap_size"));
  const double released =
      static_cast<double>(Property(property, "tcmalloc.pageheap_unmapped_bytes"));
  const double mapped = reserved - released;
  Metric(&out, "heapkit_heap_inuse_bytes", "gauge",
         "Bytes in objects the program has allocated and not freed (the HTTP endpoint's own: "
         "heapkit_endpoint_heap_bytes).",
         inuse);
  Metric(&out, "heapkit_endpoint_heap_bytes", "gauge",
         "Heap bytes the HTTP endpoint itself holds between answers (the names of the "
         "profiles' PCs, the build IDs, the delta_heap baseline); not in heapkit_heap_inuse_bytes.",
         endpoint);
  Metric(&out, "heapkit_heap_mapped_bytes", "gauge",
         "Bytes of heap address space obtained from the OS and not released to it.", mapped);
  Metric(&out, "heapkit_heap_reserved_bytes", "gauge",
         "Bytes of address space the heap holds, released pages included.", reserved);
  Metric(&out, "heapkit_heap_fragmentation_bytes", "gauge",
         "Mapped heap bytes not in use by the program or the endpoint (mapped minus allocated).",
         mapped > allocated ? mapped - allocated : 0);
  Metric(&out, "heapkit_pageheap_free_bytes", "gauge",
         "Free bytes in the page heap, not released to the OS (address space; the resident "
         "part: heapkit_resident_memory_bytes{part=\"pageheap_free\"}).",
         static_cast<double>(Property(property, "tcmalloc.pageheap_free_bytes")));
  Metric(&out, "heapkit_pageheap_released_bytes", "gauge",
         "Free bytes in the page heap released to the OS (address space holding no memory).",
         released);
  Metric(&out, "heapkit_thread_cache_free_bytes", "gauge", "Free bytes in the thread caches.",
         static_cast<double>(Property(property, "tcmalloc.thread_cache_free_bytes")));
  Metric(&out, "heapkit_central_cache_free_bytes", "gauge", "Free bytes in the central free lists.",
         static_cast<double>(Property(property, "tcmalloc.central_cache_free_bytes")));
  Metric(&out, "heapkit_transfer_cache_free_bytes", "gauge", "Free bytes in the transfer caches.",
         static_cast<double>(Property(property, "tcmalloc.transfer_cache_free_bytes")));
  uint64_t page_map = 0, arena = 0, page_map_reserved = 0, arena_reserved = 0, rss = 0;
  const bool have_figures =
      MemoryFigure(figures, "rss", &rss) && MemoryFigure(figures, "metadata_page_map", &page_map) &&
      MemoryFigure(figures, "metadata_arena", &arena) &&
      MemoryFigure(figures, "metadata_page_map_reserved", &page_map_reserved) &&
      MemoryFigure(figures, "metadata_arena_reserved", &arena_reserved);
  const double metadata_reserved =
      have_figures ? static_cast<double>(page_map_reserved + arena_reserved)
                   : static_cast<double>(Property(property, "tcmalloc.metadata_bytes"));
  Metric(&out, "heapkit_metadata_reserved_bytes", "gauge",
         "Address space reserved for the allocator's metadata (page map, arena), most of it "
         "never touched.",
         metadata_reserved);
  if (have_figures) {
    Metric(&out, "heapkit_metadata_resident_bytes", "gauge",
           "Resident bytes of the allocator's metadata (page map, arena: spans, thread caches, "
           "profiler and checker tables).",
           static_cast<double>(page_map + arena));
    ResidentParts(&out, figures, static_cast<uint64_t>(endpoint));
  }
  Metric(&out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         have_figures ? static_cast<double>(rss) : ResidentBytes());
  const double start = ProcessStartSeconds();
  if (start > 0) {
    Metric(&out, "process_start_time_seconds", "gauge",
           "Start time of the process since unix epoch in seconds.", start);
  }
  Family(&out, "heapkit_build_info", "gauge",
         "The heapkit runtime in this process: its version and build ID (always 1).");
  std::string labels =
      "version=\"" HEAPKIT_VERSION "\",build_id=\"" + RuntimeBuildId(property) + "\"";
  Labelled(&out, "heapkit_build_info", labels.c_str(), 1);
  if (totals != nullptr) {
    Metric(&out, "heapkit_allocated_objects_total", "counter",
           "Objects allocated since start, estimated from the heap samples.",
           totals->alloc_objects);
    Metric(&out, "heapkit_allocated_bytes_total", "counter",
           "Bytes allocated since start, estimated from the heap samples.", totals->alloc_bytes);
    Metric(&out, "heapkit_freed_objects_total", "counter",
           "Objects freed since start, estimated from the heap samples.",
           totals->alloc_objects - totals->inuse_objects);
    Metric(&out, "heapkit_freed_bytes_total", "counter",
           "Bytes freed since start, estimated from the heap samples.",
           totals->alloc_bytes - totals->inuse_bytes);
    Metric(&out, "heapkit_sampled_inuse_bytes", "gauge",
           "Bytes in use estimated from the heap samples (what /debug/pprof/heap shows).",
           totals->inuse_bytes);
    Metric(&out, "heapkit_profile_stacks", "gauge", "Distinct stacks in the heap profile.",
           static_cast<double>(totals->stacks));
    Metric(&out, "heapkit_sample_period_bytes", "gauge",
           "Mean bytes allocated between two heap samples.",
           static_cast<double>(totals->sample_period));
  }
  return out;
}

std::string LeakMetricsText(const LeakMetrics& leaks) {
  std::string out;
  Metric(&out, "heapkit_leak_checks_total", "counter",
         "Leak checks run through /debug/pprof/leaks.", static_cast<double>(leaks.checks));
  Metric(&out, "heapkit_leaked_bytes", "gauge",
         "Bytes in unreachable objects found by the last leak check.",
         static_cast<double>(leaks.bytes));
  Metric(&out, "heapkit_leaked_objects", "gauge",
         "Unreachable objects found by the last leak check.", static_cast<double>(leaks.objects));
  Metric(&out, "heapkit_leak_check_duration_seconds", "gauge",
         "How long the last leak check took (the program's threads stopped for part of it).",
         leaks.seconds);
  Metric(&out, "heapkit_leak_check_pause_seconds", "gauge",
         "How long the last leak check stopped the program's threads.", leaks.pause_seconds);
  Metric(&out, "heapkit_leak_checks_refused_busy_total", "counter",
         "Leak check requests refused (503) because another check was running.",
         static_cast<double>(leaks.refused_busy));
  Metric(&out, "heapkit_leak_checks_refused_too_soon_total", "counter",
         "Leak check requests refused (429) because the last live check ended too recently.",
         static_cast<double>(leaks.refused_too_soon));
  return out;
}

}  // namespace heapkit::prof::http
