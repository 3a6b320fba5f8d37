#include "pprof-tool/report/frame_lookup.h"

#include "pprof-tool/report/thread_trampoline.h"
#include "profiler/symbolize/function_name.h"

namespace heapkit::pprof {

// Display names: simplified (computed per distinct PC's frame: cheap, and no table to keep),
// or full (demangled once per linkage name).
class FrameLookup::NameCache {
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

namespace {
constexpr uint32_t kStartThread = 0;  // start_thread's function id, interned first
}  // namespace

FrameLookup::FrameLookup(Symbolizer& symbolizer, const ViewOptions& view, bool record_full_names,
                         const StackFilters& filters, std::vector<NodeInfo>* nodes)
    : symbolizer_(symbolizer),
      view_(view),
      record_full_names_(record_full_names),
      filters_(filters),
      nodes_(*nodes),
      names_(std::make_unique<NameCache>(view.full_names)) {
  function_ids_.emplace("start_thread", kStartThread);
  function_names_.push_back("start_thread");
}

FrameLookup::~FrameLookup() = default;

uint32_t FrameLookup::NodeFor(const SourceFrame& f, uint64_t pc) {
  const std::string& name = names_->Name(f);
  std::string key;
  NodeInfo info;
  info.module = f.module;
  switch (view_.granularity) {
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
      // `locations_` cache), so every call is a new node and needs no key.
      info.name = name;
      info.file = f.file;
      info.line = f.line;
      info.start_line = f.start_line;
      info.address = pc;
      break;
  }
  uint32_t id = uint32_t(nodes_.size());
  if (view_.granularity != Granularity::kAddresses) {
    auto [it, inserted] = node_ids_.emplace(std::move(key), id);
    if (!inserted) return it->second;
  }
  if (record_full_names_ && view_.granularity != Granularity::kFiles && !view_.full_names) {
    const std::string& full = names_->Full(f);
    if (full != info.name) info.full_name = full;
  }
  nodes_.push_back(std::move(info));
  return id;
}

uint32_t FrameLookup::FunctionId(const std::string& name) {
  auto [it, added] = function_ids_.try_emplace(name, uint32_t(function_names_.size()));
  if (added) function_names_.push_back(it->first);
  return it->second;
}

const std::vector<LookupFrame>& FrameLookup::Location(uint64_t pc) {
  auto it = locations_.find(pc);
  if (it != locations_.end()) return it->second;
  std::vector<LookupFrame> loc;
  for (const SourceFrame& f : symbolizer_.Symbolize(pc)) {
    if (f.inlined && view_.noinlines) continue;
    const uint32_t node = NodeFor(f, pc);
    const uint32_t module =
        module_ids_.try_emplace(f.module, uint32_t(module_ids_.size())).first->second;
    const uint32_t function = FunctionId(names_->Name(f));
    FrameRole role = FrameRole::kCaller;
    if (filters_.DropsFrame(nodes_[node])) {
      role = FrameRole::kAllocator;
    } else if (!view_.keep_allocator_frames) {
      role = ClassifyFrame(f.function, f.module);
    }
    loc.push_back({node, f.inlined, role, module, function});
  }
  return locations_.emplace(pc, std::move(loc)).first->second;
}

// thread_trampoline.h: the unnamed libstdc++ frame start_thread calls gets its name.
void FrameLookup::NameThreadTrampolines() {
  for (size_t i = 0; i + 1 < stack_.size(); ++i) {
    if (stack_[i + 1].function != kStartThread ||
        !IsUnnamedThreadTrampoline(nodes_[stack_[i].node].name, "start_thread")) {
      continue;
    }
    auto [it, added] = trampolines_.try_emplace(stack_[i].node, stack_[i]);
    if (added) {
      SourceFrame f;
      f.function = std::string(kThreadTrampolineName);
      f.module = nodes_[stack_[i].node].module;
      it->second.node = NodeFor(f, nodes_[stack_[i].node].address);
      it->second.function = FunctionId(f.function);
    }
    stack_[i] = it->second;
  }
}

const std::vector<LookupFrame>& FrameLookup::Stack(const RawSample& sample, size_t* first) {
  stack_.clear();
  for (uint64_t pc : sample.pcs) {
    const std::vector<LookupFrame>& loc = Location(pc - 1);
    stack_.insert(stack_.end(), loc.begin(), loc.end());
  }
  NameThreadTrampolines();
  *first = AllocationPathLength(
      stack_.size(), [&](size_t i) { return stack_[i].role; },
      [&](size_t i, size_t j) { return stack_[i].module == stack_[j].module; });
  return stack_;
}

}  // namespace heapkit::pprof
