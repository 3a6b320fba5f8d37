#include "profiler/http/process_symbolizer.h"

#include <time.h>

#include <cstdio>
#include <map>
#include <memory>
#include <unordered_map>

#include "alloc/internal/monotonic_clock.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::prof::http {
namespace {

size_t HeapBytesOf(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

// The frames of one PC, kept across symbolizers: the names own their linkage names (a
// SourceFrame's points into the symbolizer that made it).
struct NamedPc {
  std::vector<pprof::SourceFrame> frames;
  std::vector<std::string> linkage_names;
};

// The symbolizer the profiles use: the names of the PCs looked up before, else the libdwfl
// symbolizer, built on the first PC not named yet and dropped when idle (DropSymbolizer).
class ProcessSymbolizer final : public pprof::Symbolizer {
 public:
  // The maps text the symbolizer is built from on a miss; valid until the next call.
  void SetMaps(std::string_view maps) { maps_ = maps; }

  const std::vector<pprof::SourceFrame>& Symbolize(uint64_t pc) override {
    auto it = named_.find(pc);
    if (it != named_.end()) return it->second->frames;
    const std::vector<pprof::SourceFrame>& frames = Inner()->Symbolize(pc);
    if (named_bytes_ >= kMaxNamedBytes) return frames;  // valid while the symbolizer lives
    auto named = std::make_unique<NamedPc>();
    named->frames = frames;
    named->linkage_names.reserve(frames.size());  // no reallocation: the pointers stay valid
    size_t bytes = sizeof(NamedPc) + 6 * sizeof(void*) + frames.size() * sizeof(frames[0]) +
                   frames.size() * sizeof(std::string);
    for (pprof::SourceFrame& f : named->frames) {
      named->linkage_names.emplace_back(f.linkage_name != nullptr ? f.linkage_name : "");
      f.linkage_name = f.linkage_name != nullptr ? named->linkage_names.back().c_str() : nullptr;
      bytes += HeapBytesOf(f.function) + HeapBytesOf(f.file) + HeapBytesOf(f.module) +
               HeapBytesOf(named->linkage_names.back());
    }
    named_bytes_ += bytes;
    return named_.emplace(pc, std::move(named)).first->second->frames;
  }

  void SymbolizeWithoutCaching(uint64_t pc, std::vector<pprof::SourceFrame>* frames) override {
    auto it = named_.find(pc);
    if (it != named_.end()) {
      *frames = it->second->frames;
    } else {
      Inner()->SymbolizeWithoutCaching(pc, frames);
    }
  }

  bool has_inner() const { return inner_ != nullptr; }
  void DropInner() { inner_.reset(); }
  void Forget() {
    inner_.reset();
    named_.clear();
    named_bytes_ = 0;
  }
  size_t named_bytes() const { return named_bytes_; }

 private:
  // What the names may take: the PCs of the profiles, which the program's code bounds; a
  // program with more gets the rest named by the symbolizer on every scrape.
  static constexpr size_t kMaxNamedBytes = 512 * 1024;

  pprof::Symbolizer* Inner() {
    if (inner_ == nullptr) {
      pprof::SymbolSearch local;
      local.standard_search = false;  // local files only: no debuginfod, no network, ever
      std::vector<std::string> warnings;
      inner_ = pprof::Symbolizer::ForMappings(pprof::ParseMapsText(maps_), local, &warnings);
    }
    return inner_.get();
  }

  std::string_view maps_;
  std::unique_ptr<pprof::Symbolizer> inner_;
  std::unordered_map<uint64_t, std::unique_ptr<NamedPc>> named_;
  size_t named_bytes_ = 0;
};

struct SymbolizerCache {
  std::string key;  // the executable mappings, one "start limit offset path" line each
  ProcessSymbolizer symbolizer;
  int64_t last_use_ms = 0;
  // A profile was made since the memory was last returned: its answer's buffers (the legacy
  // text, the encoder's, zlib's) went back to the thread cache, not to the OS.
  bool used = false;
};

SymbolizerCache& Cache() {
  static SymbolizerCache* cache = new SymbolizerCache;
  return *cache;
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
  if (cache.key != key) {  // a library loaded or unloaded: the names may be another's
    cache.symbolizer.Forget();
    cache.key = std::move(key);
  }
  cache.symbolizer.SetMaps(maps);
  cache.last_use_ms = internal::MonotonicMillis();
  cache.used = true;
  return &cache.symbolizer;
}

int64_t SymbolizerDropDeadlineMs() {
  const SymbolizerCache& cache = Cache();
  return cache.used ? cache.last_use_ms + kSymbolizerIdleMs : -1;
}

void DropSymbolizer(void (*return_memory)()) {
  SymbolizerCache& cache = Cache();
  if (!cache.used) return;
  cache.used = false;
  cache.symbolizer.DropInner();
  if (return_memory != nullptr) return_memory();
}

size_t CachedBytes() {
  const SymbolizerCache& cache = Cache();
  return HeapBytesOf(cache.key) + cache.symbolizer.named_bytes();
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
