#include "heapcheck/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/proc_maps.h"
#include "heapcheck/suppressed_closure.h"
#include "profiler/legacy_writer.h"
#include "profiler/unloaded_modules.h"
#include "pprof-tool/symbolize/allocation_frames.h"
#include "pprof-tool/symbolize/symbolizer.h"

namespace heapkit::check {
namespace {

struct Group {
  uint32_t first;   // index into the sorted record order
  uint32_t count;
  uint64_t bytes;
  uint8_t state;
  bool dropped;     // suppressed or filtered
  bool suppressed;
};

struct Pattern {
  uint32_t offset;
  uint32_t length;
};

// '*' and '?' glob; allow_trailing: text may continue after the pattern ends.
bool GlobAt(const char* p, const char* pe, const char* s, const char* se, bool allow_trailing) {
  const char* star = nullptr;
  const char* resume = nullptr;
  for (;;) {
    if (p == pe && (allow_trailing || s == se)) return true;
    if (s < se && p < pe && (*p == '?' || *p == *s)) {
      ++p;
      ++s;
    } else if (p < pe && *p == '*') {
      star = p++;
      resume = s;
    } else if (star != nullptr && resume < se) {
      p = star + 1;
      s = ++resume;
    } else {
      return false;
    }
  }
}

// Objects reachable only from suppressed leaks belong to them (suppressed_closure.h): moved to
// the end of their group, out of its count and bytes, and counted as suppressed. A group left
// empty is dropped.
void HideOwnedBySuppressed(const CheckResult& result, const ProcMaps& maps,
                           const FloodOptions& flood, MmapArray<uint32_t>* order,
                           MmapArray<Group>* groups, ReportTotals* totals,
                           uint64_t* suppressed_bytes, uint64_t* suppressed_objects) {
  const size_t n = result.leaks.size();
  MmapArray<uint8_t> suppressed, hidden;
  MmapArray<Region> unreadable;
  if (!suppressed.Resize(n) || !hidden.Resize(n) || !maps.CollectUnreadable(&unreadable)) return;
  for (size_t i = 0; i < n; ++i) suppressed[i] = 0;
  for (const Group& g : *groups)
    for (uint32_t k = 0; g.suppressed && k < g.count; ++k) suppressed[(*order)[g.first + k]] = 1;
  FloodOptions options = flood;
  options.unreadable = unreadable.data();
  options.unreadable_count = unreadable.size();
  if (!FindLeaksOwnedBySuppressed(result.leaks.data(), n, suppressed.data(), options,
                                  hidden.data()))
    return;
  for (Group& g : *groups) {
    if (g.suppressed) continue;
    uint32_t* begin = order->data() + g.first;
    uint32_t* kept_end = std::stable_partition(begin, begin + g.count,
                                               [&](uint32_t r) { return !hidden[r]; });
    for (uint32_t* r = kept_end; r != begin + g.count; ++r) {
      const uint64_t bytes = result.leaks[*r].bytes;
      g.bytes -= bytes;
      *suppressed_bytes += bytes;
      ++*suppressed_objects;
      if (!g.dropped) {
        totals->bytes -= bytes;
        --totals->objects;
      }
    }
    g.count = static_cast<uint32_t>(kept_end - begin);
    if (g.count == 0) g.dropped = g.suppressed = true;
  }
}

// Threads that could not be stopped kept their stacks and registers out of the roots: objects
// only they point to are reported although they are not leaks.
void PrintUnstoppedWarning(const CheckResult& result) {
  char tids[ThreadStopper::kMaxUnstoppedListed * 12 + 8];
  size_t len = 0;
  for (size_t i = 0; i < result.unstopped_threads && i < ThreadStopper::kMaxUnstoppedListed; ++i)
    len += internal::FormatTo(tids + len, sizeof(tids) - len, "%s%d", i ? " " : "",
                              static_cast<int>(result.unstopped_tids[i]));
  if (result.unstopped_threads > ThreadStopper::kMaxUnstoppedListed)
    internal::FormatTo(tids + len, sizeof(tids) - len, " ...");
  internal::LogRaw("WARNING: %zu threads could not be stopped (tid %s): their stacks and "
                   "registers were not scanned, so this report may contain false leaks",
                   result.unstopped_threads, tids);
}

const char* ProgramPath(char* buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0) return program_invocation_name;
  buf[n] = '\0';
  return buf;
}

// A suppressions file is a short text file; anything bigger is a mistake (e.g. /dev/zero).
constexpr size_t kMaxSuppressionsBytes = size_t{1} << 20;

// Loads `leak:<pattern>` lines. At most one line for a bad file: unreadable, not a regular
// file, too big, binary, or malformed lines (the first is named, the others counted).
bool LoadSuppressions(const char* path, MmapArray<char>* text, MmapArray<Pattern>* patterns) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    internal::Log("cannot read HEAPCHECK_SUPPRESSIONS file '%s': %s; no suppressions", path,
                  strerror(errno));
    return false;
  }
  struct stat st = {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > kMaxSuppressionsBytes) {
    const bool regular = S_ISREG(st.st_mode);
    close(fd);
    internal::Log("cannot read HEAPCHECK_SUPPRESSIONS file '%s': %s; no suppressions", path,
                  regular ? "larger than 1 MiB" : "not a regular file");
    return false;
  }
  size_t size = 0;
  bool read_error = false;
  while (size < kMaxSuppressionsBytes) {
    if (!text->Resize(size + 4096)) break;
    ssize_t n = read(fd, text->data() + size, 4096);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_error = true;
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  const int read_errno = errno;
  close(fd);
  text->Resize(size);
  if (read_error) {
    internal::Log("cannot read HEAPCHECK_SUPPRESSIONS file '%s': %s; no suppressions", path,
                  strerror(read_errno));
    return false;
  }
  for (size_t i = 0; i < size; ++i) {
    const unsigned char c = static_cast<unsigned char>((*text)[i]);
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) {
      internal::Log("cannot read HEAPCHECK_SUPPRESSIONS file '%s': binary data, expected "
                    "'leak:<pattern>' lines; no suppressions",
                    path);
      text->Resize(0);
      return false;
    }
  }
  size_t line_no = 0, bad_lines = 0, first_bad = 0;
  for (size_t start = 0; start < size;) {
    size_t end = start;
    while (end < size && (*text)[end] != '\n') ++end;
    ++line_no;
    size_t s = start, e = end;
    while (s < e && ((*text)[s] == ' ' || (*text)[s] == '\t')) ++s;
    while (e > s && ((*text)[e - 1] == ' ' || (*text)[e - 1] == '\t' || (*text)[e - 1] == '\r')) --e;
    if (s < e && (*text)[s] != '#') {
      if (e - s > 5 && std::memcmp(text->data() + s, "leak:", 5) == 0) {
        patterns->PushBack({static_cast<uint32_t>(s + 5), static_cast<uint32_t>(e - s - 5)});
      } else if (bad_lines++ == 0) {
        first_bad = line_no;
      }
    }
    start = end + 1;
  }
  if (bad_lines == 1) {
    internal::Log("HEAPCHECK_SUPPRESSIONS %s:%zu: expected 'leak:<pattern>'; line ignored",
                  path, first_bad);
  } else if (bad_lines > 1) {
    internal::Log("HEAPCHECK_SUPPRESSIONS %s:%zu: expected 'leak:<pattern>'; %zu such lines "
                  "ignored",
                  path, first_bad, bad_lines);
  }
  return true;
}

struct ReportState {
  const CheckResult* result;
  MmapArray<uint32_t>* order;
  MmapArray<Group>* groups;
};

// RecordSource for the legacy writer: one record per reported group.
void VisitGroups(void* ctx, prof::RecordVisitor visit, void* visit_ctx) {
  auto* st = static_cast<ReportState*>(ctx);
  const void* pcs[256];
  for (const Group& g : *st->groups) {
    if (g.dropped) continue;
    const LeakRecord& r = st->result->leaks[(*st->order)[g.first]];
    int depth = r.depth < 256 ? r.depth : 256;
    for (int i = 0; i < depth; ++i)
      pcs[i] = reinterpret_cast<const void*>(st->result->pcs[r.pc_offset + i]);
    prof::RecordCounts c{static_cast<int64_t>(g.count), static_cast<int64_t>(g.bytes),
                         static_cast<int64_t>(g.count), static_cast<int64_t>(g.bytes)};
    visit(visit_ctx, c, pcs, depth);
  }
}

}  // namespace

bool SuppressionPatternMatches(const char* pattern, size_t plen, const char* text, size_t tlen) {
  bool anchored_start = plen > 0 && pattern[0] == '^';
  if (anchored_start) {
    ++pattern;
    --plen;
  }
  bool anchored_end = plen > 0 && pattern[plen - 1] == '$';
  if (anchored_end) --plen;
  const char* pe = pattern + plen;
  for (size_t start = 0; start <= tlen; ++start) {
    if (GlobAt(pattern, pe, text + start, text + tlen, !anchored_end)) return true;
    if (anchored_start) break;
  }
  return false;
}

void ReportNoLeaks(const CheckResult& result, const char* check_name) {
  internal::LogRaw(
      "No leaks found for check \"%s\" (but no 100%% guarantee that there aren't any): "
      "found %llu reachable heap objects of %llu bytes",
      check_name, static_cast<unsigned long long>(result.reachable_objects),
      static_cast<unsigned long long>(result.reachable_bytes));
}

ReportTotals ReportLeaks(const CheckResult& result, const ReportOptions& options) {
  ReportTotals totals;
  const size_t n = result.leaks.size();
  if (n == 0) return totals;

  // Group records by (stack, state).
  MmapArray<uint32_t> order;
  MmapArray<Group> groups;
  if (!order.Resize(n)) return totals;
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  const uintptr_t* pcs = result.pcs.data();
  auto same_stack = [&](const LeakRecord& a, const LeakRecord& b) {
    return a.depth == b.depth &&
           std::memcmp(pcs + a.pc_offset, pcs + b.pc_offset, a.depth * sizeof(uintptr_t)) == 0;
  };
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const LeakRecord& a = result.leaks[x];
    const LeakRecord& b = result.leaks[y];
    if (a.state != b.state) return a.state < b.state;
    if (a.depth != b.depth) return a.depth < b.depth;
    int c = std::memcmp(pcs + a.pc_offset, pcs + b.pc_offset, a.depth * sizeof(uintptr_t));
    if (c != 0) return c < 0;
    return a.address < b.address;
  });
  for (size_t i = 0; i < n;) {
    const LeakRecord& head = result.leaks[order[i]];
    Group g{static_cast<uint32_t>(i), 0, 0, head.state, false, false};
    size_t j = i;
    while (j < n && result.leaks[order[j]].state == head.state &&
           same_stack(result.leaks[order[j]], head)) {
      g.bytes += result.leaks[order[j]].bytes;
      ++g.count;
      ++j;
    }
    groups.PushBack(g);
    i = j;
  }
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.count != b.count) return a.count > b.count;
    return a.state < b.state;  // direct first
  });

  // Symbolize (normal heap allowed: the world runs again and recording is off).
  ProcMaps maps;
  maps.Read();
  std::vector<std::string> warnings;
  // Only the objects that hold a leak PC are given to the symbolizer (all their mappings, so
  // load biases come out right): opening every library of the process costs more than the
  // lookups themselves.
  MmapArray<char> wanted;
  {
    MmapArray<uint8_t> keep;
    keep.Resize(maps.size());
    for (size_t i = 0; i < maps.size(); ++i) keep[i] = 0;
    for (const LeakRecord& r : result.leaks) {
      for (int d = 0; d < r.depth; ++d) {
        const MapEntry* e = maps.Find(pcs[r.pc_offset + d]);
        if (e != nullptr) keep[static_cast<size_t>(e - &maps[0])] = 1;
      }
    }
    auto path_of = [&](size_t i) {
      return std::string_view(maps.text() + maps[i].path_offset, maps[i].path_length);
    };
    for (size_t i = 0; i < maps.size(); ++i) {
      if (!keep[i] || maps[i].path_length == 0) continue;
      for (size_t j = 0; j < maps.size(); ++j)
        if (!keep[j] && path_of(j) == path_of(i)) keep[j] = 2;
    }
    for (size_t i = 0; i < maps.size(); ++i) {
      if (!keep[i]) continue;
      // The line starts where the previous one ended; find it from the path backwards.
      const char* end = maps.text() + maps[i].path_offset + maps[i].path_length;
      const char* begin = maps.text() + maps[i].path_offset;
      while (begin > maps.text() && begin[-1] != '\n') --begin;
      for (const char* c = begin; c < end; ++c) wanted.PushBack(*c);
      wanted.PushBack('\n');
    }
    // Plugins dlclose()d before the check: their mappings as they were (unloaded_modules.h).
    prof::LiveModuleScan live;
    live.Feed(maps.text(), maps.text_size());
    prof::ForEachUnloadedModuleLine(
        live,
        [](void* out, const char* text, size_t length) {
          auto* w = static_cast<MmapArray<char>*>(out);
          for (size_t i = 0; i < length; ++i) w->PushBack(text[i]);
          w->PushBack('\n');
        },
        &wanted);
  }
  // The files are the ones mapped, at their paths: no symbol path (PPROF_BINARY_PATH is
  // pprof-tool's, for profiles read elsewhere); debug info as libdw finds it, when allowed.
  pprof::SymbolSearch search;
  search.standard_search = options.standard_debuginfo_search;
  std::unique_ptr<pprof::Symbolizer> symbolizer = pprof::Symbolizer::FromMaps(
      std::string_view(wanted.data(), wanted.size()), search, &warnings);
  auto frames_of = [&](uintptr_t pc) -> const std::vector<pprof::SourceFrame>* {
    if (!symbolizer) return nullptr;
    return &symbolizer->Symbolize(pc - 1);  // all are return addresses, the leaf too
  };

  // Suppressions and the minimal-mode filter.
  MmapArray<char> sup_text;
  MmapArray<Pattern> patterns;
  if (options.suppressions != nullptr && options.suppressions[0] != '\0')
    LoadSuppressions(options.suppressions, &sup_text, &patterns);
  uint64_t suppressed_bytes = 0, suppressed_objects = 0;
  const bool filter = !patterns.empty() || options.only_under_main;
  for (Group& g : groups) {
    const LeakRecord& r = result.leaks[order[g.first]];
    bool matched = false, under_main = false;
    for (int d = 0; filter && d < r.depth && !(matched && under_main); ++d) {
      const auto* frames = frames_of(pcs[r.pc_offset + d]);
      if (frames == nullptr) break;
      for (const pprof::SourceFrame& f : *frames) {
        if (f.function == "main") under_main = true;
        for (const Pattern& p : patterns) {
          const char* pat = sup_text.data() + p.offset;
          if (SuppressionPatternMatches(pat, p.length, f.function.data(), f.function.size()) ||
              SuppressionPatternMatches(pat, p.length, f.file.data(), f.file.size()) ||
              SuppressionPatternMatches(pat, p.length, f.module.data(), f.module.size())) {
            matched = true;
          }
        }
      }
    }
    if (matched) {
      g.dropped = g.suppressed = true;
      suppressed_bytes += g.bytes;
      suppressed_objects += g.count;
    } else if (options.only_under_main && symbolizer && !under_main) {
      g.dropped = true;
    }
    if (!g.dropped) {
      totals.bytes += g.bytes;
      totals.objects += g.count;
    }
  }
  if (suppressed_objects > 0) {
    HideOwnedBySuppressed(result, maps, options.flood, &order, &groups, &totals,
                          &suppressed_bytes, &suppressed_objects);
  }
  if (totals.objects == 0) {
    if (suppressed_objects > 0)
      internal::Log("leak check %s: %llu bytes in %llu objects suppressed by %s",
                    options.check_name, static_cast<unsigned long long>(suppressed_bytes),
                    static_cast<unsigned long long>(suppressed_objects), options.suppressions);
    return totals;
  }

  // The .heap file first, so the hint line can name it.
  char exe[4096];
  const char* program = ProgramPath(exe, sizeof(exe));
  char path[4096];
  internal::FormatTo(path, sizeof(path), "%s/%s.%d.%s-end.heap", options.dump_directory,
                     program_invocation_short_name, static_cast<int>(getpid()),
                     options.check_name);
  ReportState rs{&result, &order, &groups};
  prof::LegacyProfile profile;
  profile.kind = prof::ProfileKind::kHeapExact;
  profile.source = VisitGroups;
  profile.source_ctx = &rs;
  int error = 0;
  bool wrote = prof::WriteLegacyProfileFile(path, profile, &error);

  size_t reported_groups = 0;
  for (const Group& g : groups) reported_groups += !g.dropped;
  size_t to_report = reported_groups;
  if (options.max_leaks > 0 && to_report > static_cast<size_t>(options.max_leaks))
    to_report = static_cast<size_t>(options.max_leaks);

  internal::LogRaw("Leak check %s detected leaks of %llu bytes in %llu objects",
                   options.check_name, static_cast<unsigned long long>(totals.bytes),
                   static_cast<unsigned long long>(totals.objects));
  if (result.unstopped_threads > 0) PrintUnstoppedWarning(result);
  internal::LogRaw("The %zu largest leaks:", to_report);
  size_t printed = 0;
  uint64_t unaligned_objects = 0, unaligned_bytes = 0;
  for (const Group& g : groups) {
    if (g.dropped) continue;
    for (uint32_t k = 0; k < g.count; ++k) {
      const LeakRecord& r = result.leaks[order[g.first + k]];
      if (r.unaligned_reachable) {
        ++unaligned_objects;
        unaligned_bytes += r.bytes;
      }
    }
    if (printed == to_report) continue;
    ++printed;
    const LeakRecord& r = result.leaks[order[g.first]];
    internal::LogRaw("Leak of %llu bytes in %u objects allocated from: (%s leak)",
                     static_cast<unsigned long long>(g.bytes), g.count,
                     g.state == kLeakedDirect ? "direct" : "indirect");
    if (r.depth == 0) internal::LogRaw("\t@ (no stack recorded)");
    // The allocation path (std:: allocation code, strdup...) is left out, as pprof-tool does:
    // the first frame shown is the code that asked for the memory.
    std::vector<const pprof::SourceFrame*> symbolized;
    for (int d = 0; d < r.depth; ++d) {
      const auto* frames = frames_of(pcs[r.pc_offset + d]);
      if (frames == nullptr || frames->empty()) break;
      for (const pprof::SourceFrame& f : *frames) symbolized.push_back(&f);
    }
    size_t skip = pprof::AllocationPathLength(symbolized);
    for (int d = 0; d < r.depth; ++d) {
      uintptr_t pc = pcs[r.pc_offset + d];
      const auto* frames = frames_of(pc);
      if (frames == nullptr || frames->empty()) {
        internal::LogRaw("\t@ %lx", static_cast<unsigned long>(pc));
        continue;
      }
      for (const pprof::SourceFrame& f : *frames) {
        if (skip > 0) {
          --skip;
          continue;
        }
        if (f.file.empty()) {
          internal::LogRaw("\t@ %lx %s%s", static_cast<unsigned long>(pc), f.function.c_str(),
                           f.inlined ? " (inlined)" : "");
        } else {
          internal::LogRaw("\t@ %lx %s %s:%d%s", static_cast<unsigned long>(pc),
                           f.function.c_str(), f.file.c_str(), f.line,
                           f.inlined ? " (inlined)" : "");
        }
      }
    }
    if (options.identify_leaks) {
      for (uint32_t k = 0; k < g.count; ++k) {
        const LeakRecord& o = result.leaks[order[g.first + k]];
        internal::LogRaw("\tleaked object %p (%llu bytes)", reinterpret_cast<void*>(o.address),
                         static_cast<unsigned long long>(o.bytes));
      }
    }
    internal::LogRaw("%s", "");
  }
  if (suppressed_objects > 0) {
    internal::LogRaw("(%llu bytes in %llu more objects suppressed by %s)",
                     static_cast<unsigned long long>(suppressed_bytes),
                     static_cast<unsigned long long>(suppressed_objects), options.suppressions);
  }
  if (wrote) {
    internal::LogRaw(
        "If the preceding stack traces are not enough to find the leaks, try running THIS "
        "shell command:\n\npprof-tool %s \"%s\" --inuse_objects --lines --heapcheck "
        "--edgefraction=1e-10 --nodefraction=1e-10 --svg --output=\"%s.svg\"\n",
        program, path, path);
  } else {
    const char* refusal = internal::ReplaceRefusal(error);
    internal::Log("cannot write leak profile %s: %s", path, refusal ? refusal : strerror(error));
  }
  if (options.test_pointer_alignment) {
    internal::LogRaw("%llu of the leaked objects (%llu bytes) would be reachable through "
                     "unaligned pointers (HEAP_CHECK_TEST_POINTER_ALIGNMENT)",
                     static_cast<unsigned long long>(unaligned_objects),
                     static_cast<unsigned long long>(unaligned_bytes));
  } else {
    internal::LogRaw("If you are still puzzled about why the leaks are there, try rerunning "
                     "this program with HEAP_CHECK_TEST_POINTER_ALIGNMENT=1 and/or with "
                     "HEAP_CHECK_MAX_POINTER_OFFSET=-1");
  }
  return totals;
}

}  // namespace heapkit::check
