// What a view shows: the value type, the granularity, the filters, the names and the graph's
// limits. One struct, embedded where a view is chosen: the command line (cli/options.h), the
// pipeline (report/pipeline.h) and the web UI's query (web/view_query.h); a stage hands it on
// whole, never field by field. Defaults are the member initializers (the graph's limits are
// GraphOptions').
//
// kViewFields describes every member once, as go pprof's config table does: from it the
// command line makes its flags (cli/view_flags.h: name, alias, help, group; an enum member is
// one flag per choice), and the web UI its URL parameters (web/view_query.h: parse and encode)
// and its settings form (web/page.cc). A member without a row is set by code only. To add an
// option: a member and a row here, then the code that uses it (README.md, "How to add an
// option").
#pragma once

#include <span>
#include <string>
#include <variant>

#include "pprof-tool/graph/call_graph.h"
#include "pprof-tool/model/stack_samples.h"
#include "pprof-tool/report/sample_type.h"

namespace heapkit::pprof {

// Pictures' default node count (--nodecount not given); text reports show every node.
inline constexpr int kGraphNodeCount = GraphOptions().node_count;

struct ViewOptions {
  SampleType sample_type = SampleType::kInuseSpace;
  Granularity granularity = Granularity::kFunctions;
  // Regular expressions (report/name_pattern.h), "" = off: focus/ignore keep or drop whole
  // stacks, hide/show frames; show_from drops the callers above the root-most match;
  // drop_frames drops more frames at the leaf end, as the allocation path is.
  std::string focus, ignore, hide, show, show_from, drop_frames;
  bool keep_allocator_frames = false;  // keep the allocation path at the leaf end
  bool full_names = false;             // whole demangled names (else simplified)
  bool noinlines = false;              // inlined code charged to its physical function
  bool cum = false;                    // order by cum instead of flat
  bool show_bytes = false;             // exact byte counts
  bool drop_negative = false;          // leave out functions that went down
  int nodecount = -1;                  // -1: kGraphNodeCount for pictures, all for text
  double nodefraction = GraphOptions().node_fraction;
  double edgefraction = GraphOptions().edge_fraction;

  // The call graph's limits for a picture (picture: the default node count applies) or a text
  // report.
  GraphOptions Graph(bool picture) const {
    GraphOptions g;
    g.node_count = nodecount < 0 && picture ? kGraphNodeCount : nodecount;
    g.node_fraction = nodefraction;
    g.edge_fraction = edgefraction;
    g.drop_negative = drop_negative;
    return g;
  }
};

// One value of an enum member: its command-line flag (--name) and URL value.
struct ViewChoice {
  const char* name;
  int value;
  const char* help;
};

using ViewMember =
    std::variant<std::string ViewOptions::*, bool ViewOptions::*, int ViewOptions::*,
                 double ViewOptions::*, SampleType ViewOptions::*, Granularity ViewOptions::*>;

struct ViewField {
  const char* name;   // --name on the command line, the settings form's label
  const char* url;    // URL parameter; nullptr: the command line only
  const char* group;  // --help's group
  // --help's text ("{nodes}" is kGraphNodeCount, "{default}" the member's default); for an
  // enum member, what it chooses (messages say "choose one of ...", "unknown <help> ...").
  const char* help;
  ViewMember member;
  std::span<const ViewChoice> choices = {};  // an enum member's values, one flag each
  const char* alias = nullptr;               // another spelling of the flag
};

inline constexpr ViewChoice kSampleTypeChoices[] = {
    {"inuse_space", int(SampleType::kInuseSpace), "Bytes in use (default). E.g. --inuse_space"},
    {"inuse_objects", int(SampleType::kInuseObjects),
     "Objects in use. E.g. --inuse_objects --top=5"},
    {"alloc_space", int(SampleType::kAllocSpace),
     "Bytes allocated since start, freed or not. E.g. --alloc_space"},
    {"alloc_objects", int(SampleType::kAllocObjects),
     "Objects allocated since start. E.g. --alloc_objects"},
};

inline constexpr ViewChoice kGranularityChoices[] = {
    {"functions", int(Granularity::kFunctions),
     "One node per function (default). E.g. --functions"},
    {"lines", int(Granularity::kLines), "One node per source line. E.g. --lines --top=20"},
    {"files", int(Granularity::kFiles), "One node per source file. E.g. --files"},
    {"addresses", int(Granularity::kAddresses),
     "One node per instruction address. E.g. --addresses"},
};

// In --help's order within each group; the URL parameters are encoded in this order.
inline constexpr ViewField kViewFields[] = {
    {"nodecount", nullptr, "Graphs",
     "Show at most N nodes (graphs: default {nodes}; text: all). E.g. --nodecount=20",
     &ViewOptions::nodecount},
    {"nodefraction", nullptr, "Graphs",
     "Drop nodes with |cum| <= this fraction of the total ({default}). E.g. --nodefraction=0",
     &ViewOptions::nodefraction},
    {"edgefraction", nullptr, "Graphs",
     "Graphs: drop edges <= this fraction of the total ({default}). E.g. --edgefraction=0.01",
     &ViewOptions::edgefraction},
    {"sample_type", "si", "Values", "sample type", &ViewOptions::sample_type, kSampleTypeChoices},
    {"show_bytes", nullptr, "Values", "Exact byte counts instead of B/kB/MB. E.g. --show_bytes",
     &ViewOptions::show_bytes},
    {"drop_negative", nullptr, "Values",
     "With --base/--diff_base: leave out functions whose value went down. E.g. --drop_negative",
     &ViewOptions::drop_negative},
    {"granularity", nullptr, "Granularity", "granularity", &ViewOptions::granularity,
     kGranularityChoices},
    {"focus", "f", "Filters", "Only stacks with a frame matching the regex. E.g. --focus=Parse",
     &ViewOptions::focus},
    {"ignore", "i", "Filters",
     "Drop stacks with a frame matching the regex. E.g. --ignore=^std::", &ViewOptions::ignore},
    {"hide", "h", "Filters",
     "Remove frames matching the regex from stacks. E.g. --hide=^std::", &ViewOptions::hide},
    {"show", "s", "Filters",
     "Keep only frames matching the regex. E.g. --show=^myapp::", &ViewOptions::show},
    {"cum", nullptr, "Filters", "Sort by cumulative value instead of flat. E.g. --top=10 --cum",
     &ViewOptions::cum},
    {"noinlines", "noinlines", "Filters",
     "Attribute inlined code to the function it was inlined into. E.g. --noinlines --top=10",
     &ViewOptions::noinlines},
    {"drop_frames", nullptr, "Filters",
     "Also drop frames matching the regex from the leaf end of stacks. E.g. "
     "--drop_frames='^absl::'",
     &ViewOptions::drop_frames},
    {"show_from", "sf", "Filters",
     "Drop the callers above the root-most frame matching the regex. E.g. --show_from=^Server::",
     &ViewOptions::show_from},
    {"keep_allocator_frames",
     nullptr,
     "Filters",
     "Keep the allocation path at the leaf (malloc, operator new, std:: allocation code, "
     "strdup...). E.g. --keep_allocator_frames --traces",
     &ViewOptions::keep_allocator_frames,
     {},
     "no_drop_allocator"},
    {"full_names", nullptr, "Filters",
     "Whole C++ names (templates, parameters); default: simplified, equal names merge. E.g. "
     "--full_names",
     &ViewOptions::full_names},
};

}  // namespace heapkit::pprof
