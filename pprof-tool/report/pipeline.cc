#include "pprof-tool/report/pipeline.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "pprof-tool/report/allocation_wrappers.h"
#include "pprof-tool/report/name_pattern.h"
#include "pprof-tool/report/table_symbolizer.h"
#include "pprof-tool/report/thread_trampoline.h"
#include "pprof-tool/symbolize/allocation_frames.h"
#include "pprof-tool/symbolize/function_name.h"

namespace heapkit::pprof {
namespace {

std::string Basename(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string MapsLine(const Mapping& m, const std::string& path) {
  char buf[128];
  snprintf(buf, sizeof buf, "%" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " 00:00 0    ", m.start,
           m.limit, m.perms.empty() ? "r-xp" : m.perms.c_str(), m.offset);
  return buf + path + "\n";
}

// Maps text for a binary given without a memory map: its PT_LOAD segments at link addresses.
std::string SyntheticMaps(const std::string& program, std::vector<std::string>* warnings) {
  std::string text;
  int fd = open(program.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (warnings) warnings->push_back(program + ": cannot open; addresses are not symbolized");
    return text;
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr eh;
  if (elf && gelf_getehdr(elf, &eh)) {
    if (eh.e_type == ET_DYN && warnings) {
      warnings->push_back(program + ": position-independent executable and the profile has no "
                                    "memory map; assuming it was loaded at address 0");
    }
    size_t n = 0;
    if (elf_getphdrnum(elf, &n) != 0) n = 0;
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_LOAD) continue;
      Mapping m;
      m.start = ph.p_vaddr & ~uint64_t(4095);
      m.limit = ph.p_vaddr + ph.p_memsz;
      m.offset = ph.p_offset & ~uint64_t(4095);
      // Code is mapped like the kernel does it (whole pages of the file): the symbolizer
      // checks executable mappings against their segments to detect changed binaries.
      if (ph.p_flags & PF_X)
        m.limit = m.start + (((ph.p_offset + ph.p_filesz + 4095) & ~uint64_t(4095)) - m.offset);
      m.perms = (ph.p_flags & PF_X) ? "r-xp" : "r--p";
      text += MapsLine(m, program);
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return text;
}

struct Matcher {
  NamePattern re;
  bool active = false;
  bool Compile(const std::string& pattern, const char* option, std::string* error) {
    if (!re.Compile(pattern, option, error)) return false;
    active = re.active();
    return true;
  }
  bool Match(const NodeInfo& n) const {
    return re.Search(n.name) || (!n.file.empty() && re.Search(n.file));
  }
  bool MatchName(const NodeInfo& n) const { return active && re.Search(n.name); }
};

struct LocFrame {
  uint32_t node;
  bool inlined;
  FrameRole role;     // after --drop_frames / --keep_allocator_frames
  uint32_t module;    // interned module path (same id: same mapped file)
  uint32_t function;  // interned function name (allocation wrappers are found by function)
};

// Display names: simplified (computed per distinct PC's frame: cheap, and no table to keep),
// or full (demangled once per linkage name).
class NameCache {
 public:
  explicit NameCache(bool full) : full_(full) {}
  // Valid until the next call.
  const std::string& Name(const SourceFrame& f) {
    if (!full_) {
      if (f.function.find('<') == std::string::npos) return f.function;
      simplified_ = SimplifiedFunctionName(f.function);
      return simplified_;
    }
    return Full(f);
  }
  // FullFunctionName(f), demangled once per linkage name (a function is met at many PCs).
  // Keyed by the linkage name's address: it points into the symbolizer's data, one string per
  // symbol, so equal pointers are equal names (and a name met twice at two addresses is only
  // demangled twice, never wrong). A frame without a mangled name is its own full name.
  const std::string& Full(const SourceFrame& f) {
    const char* raw = f.linkage_name;
    if (raw == nullptr || raw[0] != '_' || raw[1] != 'Z') return f.function;
    auto [it, inserted] = full_names_.try_emplace(raw);
    if (inserted) it->second = FullFunctionName(f);
    return it->second;
  }

 private:
  bool full_;
  std::string simplified_;
  std::unordered_map<const char*, std::string> full_names_;
};

struct VecHash {
  size_t operator()(const std::vector<StackFrame>& v) const {
    size_t h = v.size();
    for (const StackFrame& f : v) h = h * 1000003u ^ (f.node * 2u + (f.inlined ? 1u : 0u));
    return h;
  }
};
struct VecEq {
  bool operator()(const std::vector<StackFrame>& a, const std::vector<StackFrame>& b) const {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].node != b[i].node || a[i].inlined != b[i].inlined) return false;
    }
    return true;
  }
};

bool HasValue(const SampleValues& v) {
  return v.inuse_objects != 0 || v.inuse_bytes != 0 || v.alloc_objects != 0 || v.alloc_bytes != 0;
}

}  // namespace

std::unique_ptr<Symbolizer> MakeSymbolizer(const Profile& profile, const std::string& program,
                                           const std::vector<std::string>& symbol_path,
                                           std::vector<std::string>* warnings) {
  if (!profile.symbols.empty()) return MakeTableSymbolizer(profile.symbols);
  SymbolSearch search;
  search.dirs = symbol_path;
  for (const Mapping& m : profile.mappings) {
    if (!m.build_id.empty() && !m.path.empty()) search.build_ids.emplace(m.path, m.build_id);
  }
  if (program.empty()) {
    if (profile.mappings.empty() && warnings) {
      warnings->push_back(profile.file + ": no memory map (MAPPED_LIBRARIES) and no program "
                          "given; addresses are not symbolized");
    }
    return Symbolizer::FromMaps(profile.maps_text, search, warnings);
  }
  char resolved[PATH_MAX];
  std::string prog = realpath(program.c_str(), resolved) ? std::string(resolved) : program;
  if (profile.mappings.empty()) {
    return Symbolizer::FromMaps(SyntheticMaps(prog, warnings), search, warnings);
  }
  // Substitute the given binary for the main executable's mapping lines.
  std::string target;
  for (const Mapping& m : profile.mappings) {
    if (!m.path.empty() && m.path[0] == '/' && Basename(m.path) == Basename(prog)) {
      target = m.path;
      break;
    }
  }
  if (target.empty()) {
    for (const Mapping& m : profile.mappings) {
      if (!m.path.empty() && m.path[0] == '/') {
        target = m.path;
        break;
      }
    }
  }
  std::string text;
  for (const Mapping& m : profile.mappings) {
    text += MapsLine(m, m.path == target ? prog : m.path);
  }
  auto target_id = search.build_ids.find(target);
  if (target_id != search.build_ids.end()) search.build_ids[prog] = target_id->second;
  return Symbolizer::FromMaps(text, search, warnings);
}

bool BuildStackSamples(const Profile& profile, Symbolizer& symbolizer,
                       const PipelineOptions& options, StackSamples* out, std::string* error) {
  *out = StackSamples();
  const ViewOptions& view = options.view;
  out->sample_type = SampleTypeName(view.sample_type);
  out->unit = SampleTypeUnit(view.sample_type);
  out->granularity = view.granularity;

  Matcher focus, ignore, hide, show, drop_frames, show_from;
  if (!focus.Compile(view.focus, "focus", error) ||
      !ignore.Compile(view.ignore, "ignore", error) ||
      !hide.Compile(view.hide, "hide", error) || !show.Compile(view.show, "show", error) ||
      !drop_frames.Compile(view.drop_frames, "drop_frames", error) ||
      !show_from.Compile(view.show_from, "show_from", error)) {
    return false;
  }

  std::unordered_map<std::string, uint32_t> node_ids;
  std::unordered_map<uint64_t, std::vector<LocFrame>> locations;  // key: lookup pc
  std::unordered_map<std::string, uint32_t> module_ids;
  NameCache names(view.full_names);
  auto node_for = [&](const SourceFrame& f, uint64_t pc) -> uint32_t {
    const std::string& name = names.Name(f);
    std::string key;
    NodeInfo info;
    info.module = f.module;
    switch (view.granularity) {
      case Granularity::kFunctions:
        key = name;
        info.name = name;
        info.file = f.file;
        info.start_line = f.start_line;
        break;
      case Granularity::kLines:
        key = name + '\x01' + f.file + ':' + std::to_string(f.line);
        info.name = name;
        info.file = f.file;
        info.line = f.line;
        info.start_line = f.start_line;
        break;
      case Granularity::kFiles:
        key = f.file.empty() ? name : f.file;
        info.name = key;
        info.file = f.file;
        break;
      case Granularity::kAddresses:
        // One node per frame of a PC's chain: this is called once per PC and frame (the
        // `locations` cache below), so every call is a new node and needs no key.
        info.name = name;
        info.file = f.file;
        info.line = f.line;
        info.start_line = f.start_line;
        info.address = pc;
        break;
    }
    uint32_t id = uint32_t(out->nodes.size());
    if (view.granularity != Granularity::kAddresses) {
      auto [it, inserted] = node_ids.emplace(std::move(key), id);
      if (!inserted) return it->second;
    }
    if (options.record_full_names && view.granularity != Granularity::kFiles && !view.full_names) {
      const std::string& full = names.Full(f);
      if (full != info.name) info.full_name = full;
    }
    out->nodes.push_back(std::move(info));
    return id;
  };
  auto role_of = [&](const SourceFrame& f, uint32_t node) {
    if (drop_frames.MatchName(out->nodes[node])) return FrameRole::kAllocator;
    return !view.keep_allocator_frames ? ClassifyFrame(f.function, f.module) : FrameRole::kCaller;
  };

  // Per-node filter results, computed once per node.
  std::vector<int8_t> focus_hit, ignore_hit, keep_frame, show_from_hit;
  auto eval_node = [&](uint32_t n) {
    while (focus_hit.size() <= n) {
      const NodeInfo& info = out->nodes[focus_hit.size()];
      focus_hit.push_back(focus.active ? focus.Match(info) : 1);
      ignore_hit.push_back(ignore.active ? ignore.Match(info) : 0);
      show_from_hit.push_back(show_from.MatchName(info));
      bool keep = true;
      if (hide.active && hide.Match(info)) keep = false;
      if (show.active && !show.Match(info)) keep = false;
      keep_frame.push_back(keep);
    }
  };

  std::unordered_map<std::vector<StackFrame>, size_t, VecHash, VecEq> merged;
  std::vector<StackFrame> frames;
  std::vector<LocFrame> stack;
  std::unordered_map<std::string, uint32_t> function_ids;
  std::vector<std::string> function_names;
  // thread_trampoline.h: the unnamed libstdc++ frame start_thread calls gets its name.
  std::unordered_map<uint32_t, LocFrame> trampolines;  // by the unnamed frame's node
  const uint32_t start_thread = 0;  // its function id, interned first
  function_ids.emplace("start_thread", start_thread);
  function_names.push_back("start_thread");
  auto NameThreadTrampolines = [&]() {
    for (size_t i = 0; i + 1 < stack.size(); ++i) {
      if (stack[i + 1].function != start_thread ||
          !IsUnnamedThreadTrampoline(out->nodes[stack[i].node].name, "start_thread")) {
        continue;
      }
      auto [it, added] = trampolines.try_emplace(stack[i].node, stack[i]);
      if (added) {
        SourceFrame f;
        f.function = std::string(kThreadTrampolineName);
        f.module = out->nodes[stack[i].node].module;
        it->second.node = node_for(f, out->nodes[stack[i].node].address);
        auto [fit, fadded] = function_ids.try_emplace(f.function, uint32_t(function_names.size()));
        if (fadded) function_names.push_back(fit->first);
        it->second.function = fit->second;
      }
      stack[i] = it->second;
    }
  };
  // The sample's frames, leaf first, into `stack`; returns the allocation path's length.
  auto build_stack = [&](const RawSample& s) {
    stack.clear();
    for (size_t i = 0; i < s.pcs.size(); ++i) {
      // Every PC in a heap profile is a return address, the leaf included (the leaf is the
      // return address of the call into the allocator), so all land inside their call with -1.
      uint64_t pc = s.pcs[i] - 1;
      auto it = locations.find(pc);
      if (it == locations.end()) {
        std::vector<LocFrame> loc;
        for (const SourceFrame& f : symbolizer.Symbolize(pc)) {
          if (f.inlined && view.noinlines) continue;
          uint32_t node = node_for(f, pc);
          uint32_t module = module_ids.try_emplace(f.module, uint32_t(module_ids.size())).first->second;
          auto [fit, added] = function_ids.try_emplace(names.Name(f), uint32_t(function_names.size()));
          if (added) function_names.push_back(fit->first);
          loc.push_back({node, f.inlined, role_of(f, node), module, fit->second});
        }
        it = locations.emplace(pc, std::move(loc)).first;
      }
      stack.insert(stack.end(), it->second.begin(), it->second.end());
    }
    NameThreadTrampolines();
    // The allocation path at the leaf end (at least one frame stays).
    return AllocationPathLength(
        stack.size(), [&](size_t i) { return stack[i].role; },
        [&](size_t i, size_t j) { return stack[i].module == stack[j].module; });
  };
  // Allocation wrappers (allocation_wrappers.h), found over every stack whatever the value type,
  // so that all views of a profile fold the same functions.
  std::unordered_set<uint32_t> wrappers;
  if (!view.keep_allocator_frames) {
    AllocationWrapperFinder finder;
    std::vector<uint32_t> functions;
    for (const RawSample& s : profile.samples) {
      if (!HasValue(s.value)) continue;
      const size_t first = build_stack(s);
      functions.clear();
      for (size_t i = first; i < stack.size(); ++i) functions.push_back(stack[i].function);
      finder.AddStack(functions);
    }
    wrappers = finder.Wrappers();
  }
  std::unordered_set<uint32_t> folded;
  double total = 0, base_total = 0;
  for (size_t index = 0; index < profile.samples.size(); ++index) {
    const RawSample& s = profile.samples[index];
    double v = SampleValue(s, view.sample_type);
    if (v == 0 && !(options.all_values && HasValue(s.value))) continue;
    size_t first = build_stack(s);
    while (first + 1 < stack.size() && wrappers.count(stack[first].function) != 0) {
      folded.insert(stack[first].function);
      ++first;
    }
    bool focused = !focus.active;
    bool ignored = false;
    size_t end = show_from.active ? first : stack.size();  // --show_from: up to the root-most match
    for (size_t i = first; i < stack.size(); ++i) {
      eval_node(stack[i].node);
      if (focus_hit[stack[i].node]) focused = true;
      if (ignore_hit[stack[i].node]) ignored = true;
      if (show_from_hit[stack[i].node]) end = i + 1;
    }
    if (!focused || ignored) continue;
    total += v;
    if (index >= profile.diff_base_begin) base_total += std::fabs(v);
    frames.clear();
    for (size_t i = first; i < end; ++i) {
      if (!keep_frame[stack[i].node]) continue;
      frames.push_back({stack[i].node, stack[i].inlined});
    }
    auto [mit, inserted] = merged.emplace(frames, out->samples.size());
    if (inserted) {
      out->samples.push_back({frames, v, s.value});
    } else {
      out->samples[mit->second].value += v;
      out->samples[mit->second].values += s.value;
    }
  }
  // Drop merged samples that cancelled out (e.g. --base).
  std::vector<StackSample> kept;
  kept.reserve(out->samples.size());
  for (StackSample& s : out->samples) {
    if (s.value != 0 || (options.all_values && HasValue(s.values))) kept.push_back(std::move(s));
  }
  out->samples = std::move(kept);
  for (uint32_t f : folded) out->folded_wrappers.push_back(function_names[f]);
  std::sort(out->folded_wrappers.begin(), out->folded_wrappers.end());
  out->total = profile.diff_base_begin < profile.samples.size() ? base_total : total;
  // Keep only nodes that appear in some sample (allocator frames, hidden frames... are gone).
  std::vector<int64_t> remap(out->nodes.size(), -1);
  std::vector<NodeInfo> used;
  for (StackSample& s : out->samples) {
    for (StackFrame& f : s.frames) {
      if (remap[f.node] < 0) {
        remap[f.node] = int64_t(used.size());
        used.push_back(std::move(out->nodes[f.node]));  // each node is moved once
      }
      f.node = uint32_t(remap[f.node]);
    }
  }
  out->nodes = std::move(used);
  return true;
}

}  // namespace heapkit::pprof
