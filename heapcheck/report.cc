#include "heapcheck/report.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "heapcheck/follow_up_tool.h"
#include "heapcheck/leak_groups.h"
#include "heapcheck/leak_symbols.h"
#include "heapcheck/proc_maps.h"
#include "heapcheck/suppressions.h"
#include "profiler/format/legacy_writer.h"
#include "profiler/symbolize/allocation_frames.h"

namespace heapkit::check {
namespace {

// The first tids of `threads` as "1 2 3", with " ..." when more were counted.
void FormatTids(const UnscannedThreads& threads, char* out, size_t size) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < threads.count && i < ThreadStopper::kMaxUnstoppedListed; ++i)
    len += internal::FormatTo(out + len, size - len, "%s%d", i ? " " : "",
                              static_cast<int>(threads.tids[i]));
  if (threads.count > ThreadStopper::kMaxUnstoppedListed)
    internal::FormatTo(out + len, size - len, " ...");
}

// Threads the check could not scan kept their stacks out of the roots: objects only they point
// to are reported although they are not leaks.
void PrintUnscannedWarnings(const CheckResult& result) {
  char tids[ThreadStopper::kMaxUnstoppedListed * 12 + 8];
  if (result.unstopped.count > 0) {
    FormatTids(result.unstopped, tids, sizeof(tids));
    internal::LogRaw(
        "WARNING: %zu threads could not be stopped (tid %s): their stacks and "
        "registers were not scanned, so this report may contain false leaks",
        result.unstopped.count, tids);
  }
  if (result.stack_not_mapped.count > 0) {
    FormatTids(result.stack_not_mapped, tids, sizeof(tids));
    internal::LogRaw(
        "WARNING: %zu threads have a stack pointer and thread pointer in no mapping of "
        "/proc/self/maps (tid %s): their stacks were not scanned, so this report may contain "
        "false leaks",
        result.stack_not_mapped.count, tids);
  }
}

// What anonymous memory the roots held (anonymous_roots.h): a report's reader should know that
// other allocators' arenas counted, or why they did not.
void PrintAnonymousRoots(const CheckResult& result) {
  const AnonymousRootsStats& a = result.anonymous;
  switch (a.outcome) {
    case AnonymousRootsOutcome::kScanned:
      internal::LogRaw(
          "Roots included %llu bytes of anonymous memory in %zu mappings (other allocators' "
          "arenas, direct mmaps; HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=false leaves them out)",
          static_cast<unsigned long long>(a.bytes), a.mappings);
      break;
    case AnonymousRootsOutcome::kThreadsRunning:
      internal::LogRaw(
          "WARNING: anonymous mappings were not scanned (a thread kept running and may unmap "
          "them): objects only they point to are reported as leaks");
      break;
    case AnonymousRootsOutcome::kRuntimeUnknown:
      internal::LogRaw(
          "WARNING: anonymous mappings were not scanned (the runtime's own mappings could not "
          "all be listed): objects only they point to are reported as leaks");
      break;
    case AnonymousRootsOutcome::kOff:
    case AnonymousRootsOutcome::kOutOfMemory: break;
  }
}

const char* ProgramPath(char* buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0) return program_invocation_name;
  buf[n] = '\0';
  return buf;
}

size_t ReportedGroups(const LeakGroups& groups) {
  size_t n = 0;
  for (const LeakGroup& g : groups) n += !g.dropped;
  return n;
}

// How many groups the report prints: the reported ones, at most HEAP_CHECK_MAX_LEAKS.
size_t GroupsToPrint(size_t reported, const ReportOptions& options) {
  if (options.max_leaks > 0 && reported > static_cast<size_t>(options.max_leaks))
    return static_cast<size_t>(options.max_leaks);
  return reported;
}

// Suppressions: marks groups dropped / suppressed, and counts what stays reported and what was
// suppressed. With no suppressions every group is reported.
void FilterGroups(const Suppressions& suppressions, LeakGroups* groups, LeakSymbols* symbols,
                  LeakTotals* reported, LeakTotals* suppressed) {
  const bool filter = !suppressions.empty();
  for (LeakGroup& g : *groups) {
    const LeakRecord& r = groups->Head(g);
    bool matched = false;
    for (int d = 0; filter && d < r.depth && !matched; ++d) {
      const auto* frames = symbols->Frames(groups->Stack(r)[d]);
      if (frames == nullptr) break;
      for (const pprof::SourceFrame& f : *frames) {
        if (suppressions.Matches(f)) matched = true;
      }
    }
    if (matched) {
      g.dropped = g.suppressed = true;
      suppressed->bytes += g.bytes;
      suppressed->objects += g.count;
    }
    if (!g.dropped) {
      reported->bytes += g.bytes;
      reported->objects += g.count;
    }
  }
}

// RecordSource for the legacy writer: one record per reported group.
void VisitGroups(void* ctx, prof::RecordVisitor visit, void* visit_ctx) {
  const auto* groups = static_cast<const LeakGroups*>(ctx);
  const void* pcs[256];
  for (const LeakGroup& g : *groups) {
    if (g.dropped) continue;
    const LeakRecord& r = groups->Head(g);
    int depth = r.depth < 256 ? r.depth : 256;
    for (int i = 0; i < depth; ++i) pcs[i] = reinterpret_cast<const void*>(groups->Stack(r)[i]);
    prof::RecordCounts c{static_cast<int64_t>(g.count), static_cast<int64_t>(g.bytes),
                         static_cast<int64_t>(g.count), static_cast<int64_t>(g.bytes)};
    visit(visit_ctx, c, pcs, depth);
  }
}

// The leak profile, <dump_directory>/<program>.<pid>.<check>-end.heap, path into `path`.
bool WriteLeakProfile(const LeakGroups& groups, const ReportOptions& options, char* path,
                      size_t path_size, int* error) {
  internal::FormatTo(path, path_size, "%s/%s.%d.%s-end.heap", options.dump_directory,
                     program_invocation_short_name, static_cast<int>(getpid()), options.check_name);
  prof::LegacyProfile profile;
  profile.kind = prof::ProfileKind::kHeapExact;
  profile.source = VisitGroups;
  profile.source_ctx = const_cast<LeakGroups*>(&groups);
  return prof::WriteLegacyProfileFile(path, profile, error);
}

void PrintFrame(uintptr_t pc, const pprof::SourceFrame& f) {
  if (f.file.empty()) {
    internal::LogRaw("\t@ %lx %s%s", static_cast<unsigned long>(pc), f.function.c_str(),
                     f.inlined ? " (inlined)" : "");
  } else {
    internal::LogRaw("\t@ %lx %s %s:%d%s", static_cast<unsigned long>(pc), f.function.c_str(),
                     f.file.c_str(), f.line, f.inlined ? " (inlined)" : "");
  }
}

// One `\t@ pc function file:line` line per source frame (inlined ones too); a PC with no
// symbols prints alone. The allocation path (std:: allocation code, strdup...) is left out,
// as pprof-tool does: the first frame shown is the code that asked for the memory.
void PrintStack(const uintptr_t* pcs, int depth, LeakSymbols* symbols) {
  if (depth == 0) internal::LogRaw("\t@ (no stack recorded)");
  std::vector<const pprof::SourceFrame*> symbolized;
  for (int d = 0; d < depth; ++d) {
    const auto* frames = symbols->Frames(pcs[d]);
    if (frames == nullptr || frames->empty()) break;
    for (const pprof::SourceFrame& f : *frames) symbolized.push_back(&f);
  }
  size_t skip = pprof::AllocationPathLength(symbolized);
  for (int d = 0; d < depth; ++d) {
    const auto* frames = symbols->Frames(pcs[d]);
    if (frames == nullptr || frames->empty()) {
      internal::LogRaw("\t@ %lx", static_cast<unsigned long>(pcs[d]));
      continue;
    }
    for (const pprof::SourceFrame& f : *frames) {
      if (skip > 0) {
        --skip;
        continue;
      }
      PrintFrame(pcs[d], f);
    }
  }
}

void PrintGroup(const LeakGroups& groups, const LeakGroup& g, const ReportOptions& options,
                LeakSymbols* symbols) {
  const LeakRecord& r = groups.Head(g);
  internal::LogRaw("Leak of %llu bytes in %u objects allocated from: (%s leak)",
                   static_cast<unsigned long long>(g.bytes), g.count,
                   g.state == kLeakedDirect ? "direct" : "indirect");
  PrintStack(groups.Stack(r), r.depth, symbols);
  if (options.identify_leaks) {
    for (uint32_t k = 0; k < g.count; ++k) {
      const LeakRecord& o = groups.Record(g, k);
      internal::LogRaw("\tleaked object %p (%llu bytes)", reinterpret_cast<void*>(o.address),
                       static_cast<unsigned long long>(o.bytes));
    }
  }
  internal::LogRaw("%s", "");
}

// The reported objects whose record has `flag` set.
template <typename Flag>
LeakTotals CountReported(const LeakGroups& groups, Flag flag) {
  LeakTotals counted;
  for (const LeakGroup& g : groups) {
    for (uint32_t k = 0; !g.dropped && k < g.count; ++k) {
      const LeakRecord& r = groups.Record(g, k);
      if (flag(r)) {
        ++counted.objects;
        counted.bytes += r.bytes;
      }
    }
  }
  return counted;
}

// The reported objects that unaligned pointers would reach (HEAP_CHECK_TEST_POINTER_ALIGNMENT).
LeakTotals CountUnalignedReachable(const LeakGroups& groups) {
  return CountReported(groups, [](const LeakRecord& r) { return r.unaligned_reachable != 0; });
}

// The one line on what the other interior-pointer rule would change (OtherPointerRule,
// leak_check.h), as valgrind separates "possibly lost": under a bounded rule, the reported
// objects any interior pointer would keep (groups: the reported ones; nullptr: none); under
// any interior pointer, the reachable objects the bounded rule would report. Nothing when it
// changes nothing.
void PrintOtherPointerRule(const CheckResult& result, const LeakGroups* groups,
                           int64_t max_pointer_offset) {
  const OtherPointerRule& other = result.other_rule;
  const bool bounded = max_pointer_offset >= 0;
  const long long limit = bounded ? max_pointer_offset : other.max_pointer_offset;
  if (other.outcome == OtherPointerRule::Outcome::kFloodTooLong) {
    internal::LogRaw(
        "(what interior pointers beyond %lld bytes change was not computed: the flood took "
        "%llu ms, more than the %.0f ms allowed for a second one)",
        limit, static_cast<unsigned long long>(other.first_flood_us / 1000),
        OtherPointerRule::kOtherRuleFloodBudgetSeconds * 1e3);
    return;
  }
  if (other.outcome != OtherPointerRule::Outcome::kComputed) return;
  if (bounded) {
    if (groups == nullptr) return;
    const LeakTotals kept =
        CountReported(*groups, [](const LeakRecord& r) { return r.other_rule_reachable != 0; });
    if (kept.objects == 0) return;
    internal::LogRaw(
        "%llu of these bytes in %llu objects are reached through interior pointers beyond "
        "%lld bytes: they would not be leaks if any interior pointer kept a block alive "
        "(HEAP_CHECK_MAX_POINTER_OFFSET=-1, LeakSanitizer's rule; valgrind: possibly lost)",
        static_cast<unsigned long long>(kept.bytes), static_cast<unsigned long long>(kept.objects),
        limit);
    return;
  }
  if (other.lost_objects == 0) return;
  internal::LogRaw(
      "%llu more bytes in %llu objects would be leaks if interior pointers beyond %lld bytes "
      "were ignored (HEAP_CHECK_MAX_POINTER_OFFSET=%lld, gperftools' rule; valgrind: possibly "
      "lost)",
      static_cast<unsigned long long>(other.lost_bytes),
      static_cast<unsigned long long>(other.lost_objects), limit, limit);
}

// The lines after the groups: what was suppressed, the pprof-tool command for the profile (or
// why it could not be written), and the pointer-alignment hint or count.
void PrintTrailer(const LeakGroups& groups, const ReportOptions& options,
                  const LeakTotals& suppressed, const char* program, const char* path, bool wrote,
                  int error) {
  if (suppressed.objects > 0) {
    internal::LogRaw("(%llu bytes in %llu more objects suppressed by %s)",
                     static_cast<unsigned long long>(suppressed.bytes),
                     static_cast<unsigned long long>(suppressed.objects), options.suppressions);
  }
  if (wrote) {
    char tool[4096];
    const bool found = FindPprofTool(tool, sizeof(tool));
    internal::LogRaw(
        "If the preceding stack traces are not enough to find the leaks, try running THIS "
        "shell command:\n\n%s %s \"%s\" --inuse_objects --lines --heapcheck "
        "--edgefraction=1e-10 --nodefraction=1e-10 --svg --output=\"%s.svg\"\n",
        tool, program, path, path);
    if (!found)
      internal::LogRaw(
          "(pprof-tool was found neither beside the leak checker's library nor on "
          "PATH: install heapkit's pprof-tool)");
  } else {
    const char* refusal = internal::ReplaceRefusal(error);
    internal::Log("cannot write leak profile %s: %s", path, refusal ? refusal : strerror(error));
  }
  if (options.test_pointer_alignment) {
    const LeakTotals unaligned = CountUnalignedReachable(groups);
    internal::LogRaw(
        "%llu of the leaked objects (%llu bytes) would be reachable through "
        "unaligned pointers (HEAP_CHECK_TEST_POINTER_ALIGNMENT)",
        static_cast<unsigned long long>(unaligned.objects),
        static_cast<unsigned long long>(unaligned.bytes));
  } else {  // gperftools' hint; the offset part only where a bounded rule is in force
    internal::LogRaw(
        "If you are still puzzled about why the leaks are there, try rerunning "
        "this program with HEAP_CHECK_TEST_POINTER_ALIGNMENT=1%s",
        options.flood.max_pointer_offset >= 0 ? " and/or with HEAP_CHECK_MAX_POINTER_OFFSET=-1"
                                              : "");
  }
}

// The report proper, once something is left to report: the .heap file first (so the hint
// line can name it), the totals line, the largest groups, the trailer.
void PrintReport(const CheckResult& result, const LeakGroups& groups, const ReportOptions& options,
                 const LeakTotals& reported, const LeakTotals& suppressed, LeakSymbols* symbols) {
  char exe[4096];
  const char* program = ProgramPath(exe, sizeof(exe));
  char path[4096];
  int error = 0;
  const bool wrote = WriteLeakProfile(groups, options, path, sizeof(path), &error);
  const size_t to_print = GroupsToPrint(ReportedGroups(groups), options);
  internal::LogRaw("Leak check %s detected leaks of %llu bytes in %llu objects", options.check_name,
                   static_cast<unsigned long long>(reported.bytes),
                   static_cast<unsigned long long>(reported.objects));
  internal::LogRaw(
      "Leak check %s paused the program for %llu us of its %llu us (%s)", options.check_name,
      static_cast<unsigned long long>(result.seconds_stopped * 1e6),
      static_cast<unsigned long long>(result.seconds_total * 1e6),
      result.from_snapshot ? "the flood ran in a forked snapshot" : "threads stopped throughout");
  PrintUnscannedWarnings(result);
  PrintAnonymousRoots(result);
  PrintOtherPointerRule(result, &groups, options.flood.max_pointer_offset);
  internal::LogRaw("The %zu largest leaks:", to_print);
  size_t printed = 0;
  for (const LeakGroup& g : groups) {
    if (g.dropped) continue;
    if (printed++ == to_print) break;
    PrintGroup(groups, g, options, symbols);
  }
  PrintTrailer(groups, options, suppressed, program, path, wrote, error);
}

}  // namespace

void LogAnonymousRootsFigures(const char* check_name, const CheckResult& result) {
  const AnonymousRootsStats& a = result.anonymous;
  if (a.outcome != AnonymousRootsOutcome::kScanned) return;
  internal::Log(
      "leak check %s: %llu bytes of anonymous memory scanned as roots in %zu mappings (%llu "
      "bytes of them not resident, not read)",
      check_name, static_cast<unsigned long long>(a.bytes), a.mappings,
      static_cast<unsigned long long>(a.skipped_bytes));
}

void ReportNoLeaks(const CheckResult& result, const char* check_name) {
  internal::LogRaw(
      "No leaks found for check \"%s\" (but no 100%% guarantee that there aren't any): "
      "found %llu reachable heap objects of %llu bytes",
      check_name, static_cast<unsigned long long>(result.reachable_objects),
      static_cast<unsigned long long>(result.reachable_bytes));
  // A check with any interior pointer may still have objects the bounded rule would report.
  if (result.other_rule.max_pointer_offset >= 0) PrintOtherPointerRule(result, nullptr, -1);
}

ReportTotals ReportLeaks(const CheckResult& result, const ReportOptions& options) {
  LeakTotals reported;
  if (result.leaks.size() == 0) return reported;
  LeakGroups groups(result);
  if (!groups.Build()) return reported;
  Suppressions suppressions;
  if (options.suppressions != nullptr && options.suppressions[0] != '\0')
    suppressions.Load(options.suppressions);

  // Symbolize (normal heap allowed: the world runs again and recording is off) only what will
  // be looked at: every group when a filter must see them, else the ones printed.
  const bool filter = !suppressions.empty();
  ProcMaps maps;
  maps.Read();
  LeakSymbols symbols(maps, groups, filter ? groups.size() : GroupsToPrint(groups.size(), options),
                      options.standard_debuginfo_search);

  LeakTotals suppressed;
  FilterGroups(suppressions, &groups, &symbols, &reported, &suppressed);
  if (suppressed.objects > 0)
    groups.HideOwnedBySuppressed(maps, options.flood, &reported, &suppressed);
  if (reported.objects == 0) {
    if (suppressed.objects > 0)
      internal::Log("leak check %s: %llu bytes in %llu objects suppressed by %s",
                    options.check_name, static_cast<unsigned long long>(suppressed.bytes),
                    static_cast<unsigned long long>(suppressed.objects), options.suppressions);
    return reported;
  }
  PrintReport(result, groups, options, reported, suppressed, &symbols);
  return reported;
}

}  // namespace heapkit::check
