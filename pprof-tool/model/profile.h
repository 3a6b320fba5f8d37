// The raw profile model: what a legacy heap profile file says, before symbolization.
// Parsers (pprof-tool/parse) fill it; the report pipeline (pprof-tool/report) consumes it.
//
// Invariants:
//   - Sample pcs are the file's addresses as written (return addresses, leaf first); nothing
//     has been subtracted yet. The pipeline subtracts 1 from all but pcs[0].
//   - `raw` holds the numbers of the file; `value` holds the un-sampled estimates (for
//     heap_v2 / heap v1 scaled per line, in-use and alloc separately; otherwise equal to raw).
//   - Several profiles are merged by appending samples (AddProfile); --base subtracts by
//     appending samples with negated values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pprof-tool/model/object_times.h"

namespace heapkit::pprof {

enum class ProfileKind {
  kHeapProfile,  // "@ heapprofile": exact counts
  kHeapV2,       // "@ heap_v2/<rate>": Poisson-sampled, un-sampled with 1/(1-exp(-avg/rate))
  kHeapV1,       // "@ heap/<rate>" or "@ heap": old sampling formula (see parse/unsample.h)
  kGrowth,       // "heap profile: ... @ growth" / "growthz": allocation growth stacks
  kHeapCheck,    // leak checker dump (*-end.heap): heapprofile/heap_v2 file of leaked objects
};

const char* ProfileKindName(ProfileKind kind);

// Four values per sample, the legacy format's columns, and the in-use bytes found resident
// and swapped at the dump (heapkit's HEAP_PROFILE_RESIDENCY; model/stack_residency.h).
struct SampleValues {
  double inuse_objects = 0;
  double inuse_bytes = 0;
  double alloc_objects = 0;
  double alloc_bytes = 0;
  double resident_bytes = 0;
  double swapped_bytes = 0;
  double stranded_bytes = 0;  // free bytes of their spans the live objects keep from the OS

  SampleValues& operator+=(const SampleValues& o) {
    inuse_objects += o.inuse_objects;
    inuse_bytes += o.inuse_bytes;
    alloc_objects += o.alloc_objects;
    alloc_bytes += o.alloc_bytes;
    resident_bytes += o.resident_bytes;
    swapped_bytes += o.swapped_bytes;
    stranded_bytes += o.stranded_bytes;
    return *this;
  }
  SampleValues Negated() const {
    return {-inuse_objects,  -inuse_bytes,   -alloc_objects, -alloc_bytes,
            -resident_bytes, -swapped_bytes, -stranded_bytes};
  }
};

struct RawSample {
  std::vector<uint64_t> pcs;  // leaf first, as written in the file
  SampleValues raw;           // the numbers in the file
  SampleValues value;         // un-sampled estimate (== raw for exact formats)
  // The sampling variance of `value` (model/estimate.h), when a reader or a view knows better
  // than the row's mean size (has_variance); else the pipeline derives it from `value`.
  SampleValues variance;
  bool has_variance = false;
};

// One parsed line of the MAPPED_LIBRARIES / "--- Memory map: ---" section.
struct Mapping {
  uint64_t start = 0;
  uint64_t limit = 0;    // exclusive
  uint64_t offset = 0;   // file offset of `start`
  std::string perms;     // "r-xp"
  std::string path;      // "" for anonymous mappings; "[vdso]", "/usr/lib/libc.so.6", ...
  std::string build_id;  // lower-case hex when the profile recorded it (profile.proto), else ""
};

// A symbol recorded in a self-contained (--raw) profile: the lookup PC (already adjusted: the
// return address minus 1 for callers) and its frame names, innermost (inlined) first.
// Profiles read from profile.proto also give each frame's source file and line (parallel to
// `frames`; empty when unknown) and the mapped file the PC lies in.
struct EmbeddedSymbol {
  uint64_t pc = 0;
  std::vector<std::string> frames;
  std::vector<std::string> files;
  std::vector<int> lines;
  std::vector<int> start_lines;  // Function.start_line of each frame, 0 if unknown
  std::string module;
};

struct Profile {
  ProfileKind kind = ProfileKind::kHeapProfile;
  std::string file;                // where it was read from (for messages)
  uint64_t sample_period = 0;      // <rate> of heap_v2/<rate> or heap/<rate>; 0 if exact
  bool has_alloc_columns = false;  // the "[ n: bytes]" alloc pair was present
  SampleValues header_totals;      // the header line's numbers (raw)
  std::string dump_reason;         // "# heapkit: dump reason: ..." (heapkit's profiler); "" if none
  double dump_time = 0;            // "# heapkit: dump time: <unix s>.<ms> pid <pid>"; 0 if none
  int64_t dump_pid = 0;            // the writing process, same line; 0 if none
  // "# heapkit: memory <key> <bytes>" lines (profiler/output/memory_breakdown.h), in file order.
  std::vector<std::pair<std::string, uint64_t>> memory_figures;
  // "# heapkit: residency <resident> <swapped> <stranded> @ <pcs>" lines, until ApplyStackResidency
  // moves them onto the samples (model/stack_residency.h).
  struct StackResidency {
    std::vector<uint64_t> pcs;
    double resident = 0;
    double swapped = 0;
    double stranded = 0;
  };
  std::vector<StackResidency> stack_residency;
  // "# heapkit: size_class size=... spans=... ..." lines (profiler/output/memory_breakdown.h).
  struct SizeClassFigures {
    uint64_t size = 0, spans = 0, objects_per_span = 0, out = 0, transfer = 0, free = 0,
             mostly_empty = 0;
  };
  std::vector<SizeClassFigures> size_classes;
  // "# heapkit: lifetime ..." / "# heapkit: age ..." lines (model/object_times.h).
  ObjectTimes object_times;
  std::vector<RawSample> samples;
  // Every sample's variance was recorded by the profiler (heapkit's `# heapkit: variance`
  // lines, profile.proto's *_variance sample types: model/estimate.h), none derived.
  bool variance_recorded = false;
  // Combined (AddProfile: --base, --merge) with a dump of the same process (same pid), whose
  // samples are partly the same objects' (one sampling decision per object, live at both
  // dumps): their variances do not add, the sum of both sides' bounds a difference's from
  // above. Profiles of different processes are sampled independently: false.
  bool shares_samples = false;
  std::string maps_text;                // the mapping section, verbatim (for libdwfl)
  std::vector<Mapping> mappings;        // same, parsed
  std::vector<EmbeddedSymbol> symbols;  // from a "--- symbol" section (--raw output), else empty
  std::string binary;                   // "binary=" line of a "--- symbol" section, else ""
  // profile.proto only: `symbols` cover just the locations that carried lines; other PCs are
  // symbolized from the maps. The sample types present ("inuse_space", ...; empty: all four,
  // as in legacy files) and the file's default_sample_type ("" if none).
  bool symbols_partial = false;
  std::vector<std::string> sample_types;
  std::string default_sample_type;
  // Problems the parser tolerated (e.g. "<file>:<line>: the file ends in the middle of this
  // line (truncated?); line ignored"): one line each, printed as warnings by the CLI.
  std::vector<std::string> warnings;
  // The stacks allocation wrappers are decided from when the samples are a view's selection
  // (--lifetime, --since, a timeline window keep the stacks of the whole dump here), so that
  // every view of one profile folds the same functions; empty: the samples' own stacks.
  std::vector<std::vector<uint64_t>> wrapper_stacks;
  // Samples from this index on are a --diff_base (negated); SIZE_MAX: no diff base.
  size_t diff_base_begin = SIZE_MAX;

  // Appends other's samples (optionally negated, for --base). If other comes from another
  // process (different maps, e.g. ASLR), its PCs are translated into this profile's address
  // space through (file path, file offset); files only it maps are adopted when their
  // address ranges do not collide with ours (else their PCs stay unsymbolized).
  void AddProfile(const Profile& other, bool negate);

 private:
  void MergeSampleTypes(const Profile& other);
};

}  // namespace heapkit::pprof
