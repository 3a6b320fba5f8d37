// The view's regular-expression filters (report/view_options.h), compiled once per pipeline run
// and evaluated once per node: --focus / --ignore keep or drop whole stacks, --show_from drops
// the callers above the root-most match, --hide / --show drop frames, and --drop_frames marks
// more frames of the allocation path (report/frame_lookup.h). The pipeline is the only place
// that applies them, so the command line, the web UI and the profile.proto writer all filter
// alike. A pattern is searched in a node's name and, except for show_from and drop_frames, in
// its file too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pprof-tool/model/stack_samples.h"
#include "pprof-tool/report/name_pattern.h"
#include "pprof-tool/report/view_options.h"

namespace heapkit::pprof {

class StackFilters {
 public:
  // False and one line in *error for a bad pattern (the first one, in the options' order).
  bool Compile(const ViewOptions& view, std::string* error);

  // --drop_frames: the node's frames belong to the allocation path.
  bool DropsFrame(const NodeInfo& node) const;

  // A stack (leaf first, after its allocation path) of `nodes`: false when --focus / --ignore
  // drop it; else the frames that --show_from, --hide and --show keep, in *kept.
  bool Apply(const std::vector<StackFrame>& stack, const std::vector<NodeInfo>& nodes,
             std::vector<StackFrame>* kept);

 private:
  struct Pattern {
    NamePattern re;
    bool active = false;
    bool Compile(const std::string& pattern, const char* option, std::string* error);
    bool Match(const NodeInfo& n) const;  // name or file
    bool MatchName(const NodeInfo& n) const { return active && re.Search(n.name); }
  };
  // Each node's results, computed when a stack first shows the node.
  struct NodeHits {
    bool focus, ignore, keep, show_from;
  };
  const NodeHits& Hits(uint32_t node, const std::vector<NodeInfo>& nodes);

  Pattern focus_, ignore_, hide_, show_, drop_frames_, show_from_;
  std::vector<NodeHits> hits_;
};

}  // namespace heapkit::pprof
