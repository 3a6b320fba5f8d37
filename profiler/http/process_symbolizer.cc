#include "profiler/http/process_symbolizer.h"

#include <time.h>

#include <cstdio>
#include <map>
#include <memory>

#include "profiler/symbolize/build_id.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::prof::http {
namespace {

struct SymbolizerCache {
  std::string key;  // the executable mappings, one "start limit offset path" line each
  std::unique_ptr<pprof::Symbolizer> symbolizer;
  int64_t last_use_ms = 0;
  std::map<std::string, std::string> build_ids;  // path → hex
};

SymbolizerCache& Cache() {
  static SymbolizerCache* cache = new SymbolizerCache;
  return *cache;
}

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

std::vector<CodeMapping> ExecutableMappings(std::string_view maps) {
  std::vector<CodeMapping> out;
  for (const MapsLine& m : pprof::ParseMapsText(maps)) {
    if (!m.executable || m.path.empty() || m.path[0] != '/') continue;  // [vdso], anonymous code
    out.push_back({m.start, m.limit, m.offset, std::string(m.path)});
  }
  return out;
}

pprof::Symbolizer* SymbolizerFor(std::string_view maps, const std::vector<CodeMapping>& code) {
  std::string key;
  for (const CodeMapping& m : code) {
    key += std::to_string(m.start) + " " + std::to_string(m.limit) + " " +
           std::to_string(m.offset) + " " + m.path + "\n";
  }
  SymbolizerCache& cache = Cache();
  if (cache.symbolizer == nullptr || cache.key != key) {
    pprof::SymbolSearch local;
    local.standard_search = false;  // local files only: no debuginfod, no network, ever
    std::vector<std::string> warnings;
    cache.symbolizer = pprof::Symbolizer::ForMappings(pprof::ParseMapsText(maps), local, &warnings);
    cache.key = std::move(key);
  }
  cache.last_use_ms = MonotonicMs();
  return cache.symbolizer.get();
}

int64_t SymbolizerDropDeadlineMs() {
  const SymbolizerCache& cache = Cache();
  return cache.symbolizer == nullptr ? -1 : cache.last_use_ms + kSymbolizerIdleMs;
}

void DropSymbolizer(void (*return_memory)()) {
  SymbolizerCache& cache = Cache();
  if (cache.symbolizer == nullptr) return;
  cache.symbolizer.reset();
  cache.key.clear();
  cache.key.shrink_to_fit();
  if (return_memory != nullptr) return_memory();
}

size_t CachedBytes() {
  // A map node holds its two strings and three pointers and a colour; strings beyond the
  // 15 bytes kept inline own a block of their capacity.
  size_t bytes = 0;
  for (const auto& [path, hex] : Cache().build_ids) {
    bytes += sizeof(std::pair<const std::string, std::string>) + 4 * sizeof(void*);
    if (path.capacity() > 15) bytes += path.capacity() + 1;
    if (hex.capacity() > 15) bytes += hex.capacity() + 1;
  }
  return bytes;
}

const std::string& BuildIdOf(const std::string& path) {
  auto& ids = Cache().build_ids;
  auto it = ids.find(path);
  if (it == ids.end()) it = ids.emplace(path, pprof::ReadBuildIdHex(path)).first;
  return it->second;
}

std::string ReadProcMaps() {
  std::string text;
  FILE* f = fopen("/proc/self/maps", "re");
  if (f == nullptr) return text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  fclose(f);
  return text;
}

std::vector<std::string> FunctionsAt(std::span<const uint64_t> addresses, int64_t cpu_budget_ns,
                                     bool* complete) {
  const int64_t deadline = ThreadCpuNanos() + cpu_budget_ns;
  const std::string maps = ReadProcMaps();
  pprof::Symbolizer* symbolizer = SymbolizerFor(maps, ExecutableMappings(maps));
  std::vector<std::string> names;
  names.reserve(addresses.size());
  std::vector<pprof::SourceFrame> frames;
  *complete = true;
  for (uint64_t address : addresses) {
    // The clock is read every 64 lookups: a lookup takes microseconds, the read tens of ns.
    if (names.size() % 64 == 63 && ThreadCpuNanos() > deadline) {
      *complete = false;
      break;
    }
    symbolizer->SymbolizeWithoutCaching(address, &frames);
    names.push_back(frames.back().placeholder ? std::string() : frames.back().function);
  }
  return names;
}

}  // namespace heapkit::prof::http
