#include "pprof-tool/report/stack_filters.h"

namespace heapkit::pprof {

bool StackFilters::Pattern::Compile(const std::string& pattern, const char* option,
                                    std::string* error) {
  if (!re.Compile(pattern, option, error)) return false;
  active = re.active();
  return true;
}

bool StackFilters::Pattern::Match(const NodeInfo& n) const {
  return re.Search(n.name) || (!n.file.empty() && re.Search(n.file));
}

bool StackFilters::Compile(const ViewOptions& view, std::string* error) {
  return focus_.Compile(view.focus, "focus", error) &&
         ignore_.Compile(view.ignore, "ignore", error) && hide_.Compile(view.hide, "hide", error) &&
         show_.Compile(view.show, "show", error) &&
         drop_frames_.Compile(view.drop_frames, "drop_frames", error) &&
         show_from_.Compile(view.show_from, "show_from", error);
}

bool StackFilters::DropsFrame(const NodeInfo& node) const { return drop_frames_.MatchName(node); }

const StackFilters::NodeHits& StackFilters::Hits(uint32_t node,
                                                 const std::vector<NodeInfo>& nodes) {
  while (hits_.size() <= node) {
    const NodeInfo& info = nodes[hits_.size()];
    NodeHits h;
    h.focus = focus_.active ? focus_.Match(info) : true;
    h.ignore = ignore_.active && ignore_.Match(info);
    h.show_from = show_from_.MatchName(info);
    h.keep = !(hide_.active && hide_.Match(info)) && !(show_.active && !show_.Match(info));
    hits_.push_back(h);
  }
  return hits_[node];
}

bool StackFilters::Apply(const std::vector<StackFrame>& stack, const std::vector<NodeInfo>& nodes,
                         std::vector<StackFrame>* kept) {
  bool focused = !focus_.active;
  bool ignored = false;
  size_t end = show_from_.active ? 0 : stack.size();  // --show_from: up to the root-most match
  for (size_t i = 0; i < stack.size(); ++i) {
    const NodeHits& h = Hits(stack[i].node, nodes);
    if (h.focus) focused = true;
    if (h.ignore) ignored = true;
    if (h.show_from) end = i + 1;
  }
  if (!focused || ignored) return false;
  kept->clear();
  for (size_t i = 0; i < end; ++i) {
    if (Hits(stack[i].node, nodes).keep) kept->push_back(stack[i]);
  }
  return true;
}

}  // namespace heapkit::pprof
