#include "profiler/http/metrics_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace heapkit::prof::http {
namespace {

void Metric(std::string* out, const char* name, const char* type, const char* help, double value) {
  char line[512];
  snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type,
           name, value);
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

}  // namespace

std::string MetricsText(NumericProperty property, const HeapTotals* totals) {
  std::string out;
  const double inuse = static_cast<double>(Property(property, "generic.current_allocated_bytes"));
  const double reserved = static_cast<double>(Property(property, "generic.heap_size"));
  const double released =
      static_cast<double>(Property(property, "tcmalloc.pageheap_unmapped_bytes"));
  const double mapped = reserved - released;
  Metric(&out, "heapkit_heap_inuse_bytes", "gauge",
         "Bytes in objects the program has allocated and not freed.", inuse);
  Metric(&out, "heapkit_heap_mapped_bytes", "gauge",
         "Bytes of heap obtained from the OS and not released to it.", mapped);
  Metric(&out, "heapkit_heap_reserved_bytes", "gauge",
         "Bytes of address space the heap holds, released pages included.", reserved);
  Metric(&out, "heapkit_heap_fragmentation_bytes", "gauge",
         "Mapped heap bytes not in use by the program (mapped minus in use).", mapped - inuse);
  Metric(&out, "heapkit_pageheap_free_bytes", "gauge", "Free bytes in the page heap, still mapped.",
         static_cast<double>(Property(property, "tcmalloc.pageheap_free_bytes")));
  Metric(&out, "heapkit_pageheap_released_bytes", "gauge",
         "Free bytes in the page heap released to the OS.", released);
  Metric(&out, "heapkit_thread_cache_free_bytes", "gauge", "Free bytes in the thread caches.",
         static_cast<double>(Property(property, "tcmalloc.thread_cache_free_bytes")));
  Metric(&out, "heapkit_central_cache_free_bytes", "gauge", "Free bytes in the central free lists.",
         static_cast<double>(Property(property, "tcmalloc.central_cache_free_bytes")));
  Metric(&out, "heapkit_transfer_cache_free_bytes", "gauge", "Free bytes in the transfer caches.",
         static_cast<double>(Property(property, "tcmalloc.transfer_cache_free_bytes")));
  Metric(&out, "heapkit_metadata_bytes", "gauge", "Bytes of the allocator's own metadata.",
         static_cast<double>(Property(property, "tcmalloc.metadata_bytes")));
  Metric(&out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         ResidentBytes());
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
