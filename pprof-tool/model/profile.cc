#include "pprof-tool/model/profile.h"

#include "pprof-tool/model/estimate.h"

#include <cstdio>
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace heapkit::pprof {

const char* ProfileKindName(ProfileKind kind) {
  switch (kind) {
    case ProfileKind::kHeapProfile: return "heapprofile";
    case ProfileKind::kHeapV2: return "heap_v2";
    case ProfileKind::kHeapV1: return "heap";
    case ProfileKind::kGrowth: return "growth";
    case ProfileKind::kHeapCheck: return "heapcheck";
  }
  return "?";
}

namespace {

const Mapping* FindMapping(const std::vector<const Mapping*>& sorted, uint64_t pc) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), pc,
                             [](uint64_t a, const Mapping* m) { return a < m->start; });
  if (it == sorted.begin()) return nullptr;
  --it;
  return pc < (*it)->limit ? *it : nullptr;
}

bool Overlaps(const std::vector<Mapping>& ms, const Mapping& m) {
  for (const Mapping& x : ms) {
    if (m.start < x.limit && x.start < m.limit) return true;
  }
  return false;
}

}  // namespace

void Profile::MergeSampleTypes(const Profile& other) {
  if (sample_types.empty() || other.sample_types.empty()) {
    sample_types.clear();  // one of them has all four
    return;
  }
  for (const std::string& t : other.sample_types) {
    if (std::find(sample_types.begin(), sample_types.end(), t) == sample_types.end()) {
      sample_types.push_back(t);
    }
  }
}

void Profile::AddProfile(const Profile& other, bool negate) {
  // Profiles of different processes (ASLR) map the same files at different addresses:
  // translate the other profile's PCs into our address space through (path, file offset).
  // Files we do not map are adopted with their addresses when they do not collide.
  const bool same_maps = other.maps_text == maps_text || other.mappings.empty();
  std::vector<const Mapping*> theirs;
  std::map<std::string, std::vector<const Mapping*>> ours_by_path;
  if (!same_maps) {
    for (const Mapping& m : other.mappings) theirs.push_back(&m);
    std::sort(theirs.begin(), theirs.end(),
              [](const Mapping* a, const Mapping* b) { return a->start < b->start; });
    std::set<std::string> our_paths;
    for (const Mapping& m : mappings) our_paths.insert(m.path);
    std::set<std::string> adopted;
    for (const Mapping& m : other.mappings) {
      if (m.path.empty() || our_paths.count(m.path)) continue;
      if (!Overlaps(mappings, m)) adopted.insert(m.path);
    }
    for (const Mapping& m : other.mappings) {
      if (adopted.count(m.path)) mappings.push_back(m);
    }
    if (!adopted.empty()) {
      std::string text;
      char buf[128];
      for (const Mapping& m : mappings) {
        snprintf(buf, sizeof buf, "%llx-%llx %s %08llx 00:00 0", (unsigned long long)m.start,
                 (unsigned long long)m.limit, m.perms.empty() ? "r-xp" : m.perms.c_str(),
                 (unsigned long long)m.offset);
        text += buf;
        if (!m.path.empty()) {
          text += "    ";
          text += m.path;
        }
        text += '\n';
      }
      maps_text = std::move(text);
    }
    // Built after adoption: pointers into `mappings` must not see a reallocation.
    for (const Mapping& m : mappings) {
      if (!m.path.empty()) ours_by_path[m.path].push_back(&m);
    }
  }
  auto translate = [&](uint64_t pc) -> uint64_t {
    const Mapping* m = FindMapping(theirs, pc);
    if (m == nullptr || m->path.empty()) return pc;
    auto it = ours_by_path.find(m->path);
    if (it == ours_by_path.end()) return pc;
    uint64_t file_off = pc - m->start + m->offset;
    for (const Mapping* n : it->second) {
      if (file_off >= n->offset && file_off - n->offset < n->limit - n->start &&
          (n->perms.find('x') != std::string::npos) == (m->perms.find('x') != std::string::npos)) {
        return n->start + (file_off - n->offset);
      }
    }
    return pc;
  };
  samples.reserve(samples.size() + other.samples.size());
  for (const RawSample& s : other.samples) {
    RawSample copy = s;
    if (!copy.has_variance) {  // at the rate `other` was un-sampled with, which may differ
      copy.variance = SampleVarianceOf(s, UnsamplingRate(other));
      copy.has_variance = true;
    }
    if (negate) {  // the variance of a difference is the sum of both sides'
      copy.raw = s.raw.Negated();
      copy.value = s.value.Negated();
    }
    if (!same_maps) {
      for (uint64_t& pc : copy.pcs) pc = translate(pc);
    }
    samples.push_back(std::move(copy));
  }
  has_alloc_columns = has_alloc_columns || other.has_alloc_columns;
  variance_recorded = variance_recorded && other.variance_recorded;
  shares_samples =
      shares_samples || other.shares_samples || (dump_pid != 0 && dump_pid == other.dump_pid);
  symbols.insert(symbols.end(), other.symbols.begin(), other.symbols.end());
  symbols_partial = symbols_partial || other.symbols_partial;
  MergeSampleTypes(other);
  if (binary.empty()) binary = other.binary;
  if (maps_text.empty() && mappings.empty()) {
    maps_text = other.maps_text;
    mappings = other.mappings;
  }
}

}  // namespace heapkit::pprof
