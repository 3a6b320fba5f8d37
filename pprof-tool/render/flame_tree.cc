#include "pprof-tool/render/flame_tree.h"

#include <algorithm>
#include <cmath>

namespace heapkit::pprof {

std::vector<TreeFrame> BuildFlameTree(const StackSamples& samples,
                                      const std::vector<std::string>& labels) {
  std::vector<uint32_t> by_name(labels.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [&](uint32_t a, uint32_t b) {
    const int c = labels[a].compare(labels[b]);
    return c != 0 ? c < 0 : a < b;
  });
  std::vector<uint32_t> rank(labels.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;

  std::vector<uint32_t> order;
  order.reserve(samples.samples.size());
  for (uint32_t i = 0; i < samples.samples.size(); ++i) {
    if (samples.samples[i].value != 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const std::vector<StackFrame>& fa = samples.samples[a].frames;
    const std::vector<StackFrame>& fb = samples.samples[b].frames;
    const size_t na = fa.size(), nb = fb.size();
    for (size_t k = 0; k < na && k < nb; ++k) {
      const uint32_t ra = rank[fa[na - 1 - k].node], rb = rank[fb[nb - 1 - k].node];
      if (ra != rb) return ra < rb;
    }
    return na > nb;
  });

  std::vector<TreeFrame> tree(1);
  std::vector<uint32_t> path{0};  // path[d]: the frame at depth d of the current stack
  const std::vector<StackFrame>* prev = nullptr;
  double x = 0;
  for (const uint32_t i : order) {
    const StackSample& s = samples.samples[i];
    const size_t n = s.frames.size();
    size_t common = 0;
    if (prev != nullptr) {
      const size_t pn = prev->size();
      while (common < n && common < pn &&
             (*prev)[pn - 1 - common].node == s.frames[n - 1 - common].node) {
        ++common;
      }
    }
    path.resize(common + 1);
    for (size_t k = common; k < n; ++k) {
      TreeFrame f;
      f.node = s.frames[n - 1 - k].node;
      f.depth = static_cast<uint32_t>(k + 1);
      f.offset = x;
      path.push_back(static_cast<uint32_t>(tree.size()));
      tree.push_back(f);
    }
    const double a = std::fabs(s.value);
    for (size_t d = 0; d < path.size(); ++d) {
      TreeFrame& f = tree[path[d]];
      f.width += a;
      f.net += s.value;
      if (d > 0 && s.frames[n - d].inlined) f.inlined = true;
    }
    x += a;
    prev = &s.frames;
  }
  return tree;
}

}  // namespace heapkit::pprof
