#include "pprof-tool/proto/profile_writer.h"

#include "pprof-tool/model/stack_residency.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <google/protobuf/arena.h>

#include "profile.pb.h"
#include "pprof-tool/model/estimate.h"
#include "profiler/format/heap_sample_values.h"
#include "profiler/symbolize/build_id.h"
#include "pprof-tool/proto/function_names.h"
#include "pprof-tool/proto/gzip_io.h"
#include "pprof-tool/proto/utf8.h"
#include "pprof-tool/report/sample_type.h"

namespace heapkit::pprof {
namespace {

namespace pb = perftools::profiles;

struct ExportedType {
  SampleType type;
  const char* name;
  const char* unit;
  bool variance = false;  // the sampling variance of `type`'s value, not the value
};

constexpr ExportedType kHeapTypes[] = {
    {SampleType::kAllocObjects, "alloc_objects", "count"},
    {SampleType::kAllocSpace, "alloc_space", "bytes"},
    {SampleType::kInuseObjects, "inuse_objects", "count"},
    {SampleType::kInuseSpace, "inuse_space", "bytes"},
};

// The variance types are the runtime's (prof::kVarianceValues: the files of HEAP_PROFILE_FORMAT
// and the HTTP endpoint), in its order: one per heap type, named after it.
constexpr bool VarianceTypesFollowHeapTypes() {
  if (prof::kVarianceValueCount != std::size(kHeapTypes)) return false;
  for (size_t i = 0; i < std::size(kHeapTypes); ++i) {
    const std::string_view variance = prof::kVarianceValues[i].type.type;
    const std::string_view value = kHeapTypes[i].name;
    if (variance.substr(0, value.size()) != value || variance.substr(value.size()) != "_variance")
      return false;
  }
  return true;
}
static_assert(VarianceTypesFollowHeapTypes());

// A sample's exported value: its rounded estimate, or its variance as the runtime writes one.
int64_t ExportedValue(const StackSample& s, const ExportedType& t) {
  if (t.variance) return prof::VarianceSampleValue(SelectValue(s.variances, t.type));
  return std::llround(SelectValue(s.values, t.type));
}

// The variances go into the file only as the profiler recorded them (a sampled profile whose
// every sample carried its variance), summed over independently sampled profiles: what
// pprof-tool derives from a row's mean size, or from a view's lines, is its display and never
// data a reader could take for the profiler's. A combination with another dump of the same
// process (--base, --merge) shares samples, so its summed variances are not the result's
// either: none are written.
bool ExportsRecordedVariance(const Profile& profile, const ProtoWriteOptions& options) {
  return profile.variance_recorded && !profile.shares_samples && !options.heapcheck &&
         UnsamplingRate(profile) > 1;
}

struct ViewPairHash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& p) const {
    return std::hash<std::string_view>()(p.first) * 31 + std::hash<std::string_view>()(p.second);
  }
};

struct MappingStats {
  size_t locations = 0, with_lines = 0;
  bool files = false, line_numbers = false, inline_frames = false;
};

class ProtoBuilder {
 public:
  ProtoBuilder(const Profile& profile, const std::string& main_binary) {
    Intern("");
    AddMappings(profile, main_binary);
  }

  // The keys view the message's own copies (strings in a repeated field never move).
  // Names are stored as valid UTF-8 (utf8.h).
  int64_t Intern(std::string_view s) {
    if (!IsValidUtf8(s)) return Intern(ToValidUtf8(s));
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    std::string* stored = out_->add_string_table();
    stored->assign(s.data(), s.size());
    return strings_.emplace(*stored, int64_t(strings_.size())).first->second;
  }

  // Adds the samples of the pipeline run (address granularity, all values). The pipeline has
  // merged equal frame lists, and distinct frame lists give distinct location lists (a node
  // at address granularity is one PC and one frame of its chain), so samples map one to one.
  void AddRun(const StackSamples& run, const std::vector<ExportedType>& types) {
    std::vector<int64_t> loc_of_first_node(run.nodes.size(), -1);
    std::vector<int64_t> values(types.size());
    out_->mutable_sample()->Reserve(int(run.samples.size()));
    for (const StackSample& s : run.samples) {
      bool any = false;
      for (size_t column = 0; column < types.size(); ++column) {
        values[column] = ExportedValue(s, types[column]);
        any = any || values[column] != 0;
      }
      // e.g. a leak-checker export of a stack with alloc values only; a sampled difference
      // that nets to 0 keeps its variance, and so its sample
      if (!any) continue;
      pb::Sample* sample = out_->add_sample();
      sample->mutable_value()->Add(values.begin(), values.end());
      sample->mutable_location_id()->Reserve(int(s.frames.size()));  // at most one per frame
      for (size_t i = 0; i < s.frames.size();) {
        // One Location per PC: frames inlined into the next frame at the same address.
        const uint64_t address = run.nodes[s.frames[i].node].address;
        size_t j = i;
        while (s.frames[j].inlined && j + 1 < s.frames.size() &&
               run.nodes[s.frames[j + 1].node].address == address) {
          ++j;
        }
        // The chain below a given first frame is fixed (same PC, same filters): cache it.
        int64_t& loc = loc_of_first_node[s.frames[i].node];
        if (loc < 0) loc = int64_t(LocationFor(run, s.frames, i, j));
        sample->add_location_id(uint64_t(loc));
        i = j + 1;
      }
    }
  }

  std::string Finish(const std::vector<ExportedType>& types, uint64_t period, bool gzip) {
    for (const ExportedType& t : types) {
      pb::ValueType* vt = out_->add_sample_type();
      vt->set_type(Intern(t.name));
      vt->set_unit(Intern(t.unit));
    }
    for (size_t i = 0; i < mappings_.size(); ++i) {
      pb::Mapping* m = out_->mutable_mapping(int(i));
      const MappingStats& st = stats_[i];
      // has_functions: every location of the mapping is symbolized (readers may skip it);
      // the others: such information is present.
      m->set_has_functions(st.locations > 0 && st.with_lines == st.locations);
      m->set_has_filenames(st.files);
      m->set_has_line_numbers(st.line_numbers);
      m->set_has_inline_frames(st.inline_frames);
    }
    pb::ValueType* pt = out_->mutable_period_type();
    pt->set_type(Intern("space"));
    pt->set_unit(Intern("bytes"));
    out_->set_period(int64_t(period));
    out_->set_default_sample_type(Intern("inuse_space"));
    // The schema has no map fields, so the encoding is fixed by field order: deterministic.
    return gzip ? GzipSerialize(*out_) : out_->SerializeAsString();
  }

 private:
  void AddMappings(const Profile& profile, const std::string& main_binary) {
    // Code mappings (like go pprof's own legacy reader: PCs land in them); a file none of
    // whose mappings says 'x' (hand-made maps) keeps all of its mappings.
    auto is_code = [](const Mapping& m) {
      return m.perms.empty() || m.perms.find('x') != std::string::npos;
    };
    std::unordered_set<std::string> files_with_code;
    for (const Mapping& m : profile.mappings) {
      if (is_code(m)) files_with_code.insert(m.path);
    }
    std::vector<const Mapping*> exec;
    for (const Mapping& m : profile.mappings) {
      if (m.limit > m.start &&
          (is_code(m) || (!m.path.empty() && !files_with_code.count(m.path)))) {
        exec.push_back(&m);
      }
    }
    std::stable_partition(exec.begin(), exec.end(), [&](const Mapping* m) {
      return !main_binary.empty() && m->path == main_binary;
    });
    std::unordered_map<std::string, std::string> build_ids;
    for (const Mapping* m : exec) {
      pb::Mapping* out = out_->add_mapping();
      out->set_id(uint64_t(out_->mapping_size()));
      out->set_memory_start(m->start);
      out->set_memory_limit(m->limit);
      out->set_file_offset(m->offset);
      out->set_filename(Intern(m->path));
      if (!m->path.empty() && m->path[0] == '/') {
        auto it = build_ids.find(m->path);
        if (it == build_ids.end()) it = build_ids.emplace(m->path, ReadBuildIdHex(m->path)).first;
        if (!it->second.empty()) out->set_build_id(Intern(it->second));
      }
      mappings_.push_back(m);
    }
    stats_.resize(mappings_.size());
    for (size_t i = 0; i < mappings_.size(); ++i) order_.push_back(i);
    std::sort(order_.begin(), order_.end(),
              [&](size_t a, size_t b) { return mappings_[a]->start < mappings_[b]->start; });
  }

  // Index into mappings_ of the mapping holding `address`, or -1.
  int64_t MappingOf(uint64_t address) const {
    auto it = std::upper_bound(order_.begin(), order_.end(), address,
                               [&](uint64_t a, size_t i) { return a < mappings_[i]->start; });
    while (it != order_.begin()) {
      --it;
      const Mapping* m = mappings_[*it];
      if (address < m->limit) return int64_t(*it);
      if (address >= m->start) return -1;
    }
    return -1;
  }

  // Function of a node: one per (name, file). The keys view the run's node strings (the run
  // outlives the builder's use of them).
  uint64_t FunctionFor(const NodeInfo& node) {
    auto it = functions_.find({node.name, node.file});
    if (it != functions_.end()) return it->second;
    FunctionNames names = NamesForProto(node.name, node.full_name);
    pb::Function* f = out_->add_function();
    f->set_id(uint64_t(out_->function_size()));
    f->set_name(Intern(names.name));
    f->set_system_name(Intern(names.system_name));
    f->set_filename(Intern(node.file));
    f->set_start_line(node.start_line);
    functions_.emplace(std::make_pair(std::string_view(node.name), std::string_view(node.file)),
                       f->id());
    return f->id();
  }

  // A new Location for frames[first..last] (one PC). Callers cache it by the first frame's
  // node: at address granularity a node is one PC and one frame of its chain, and the chain
  // below it is fixed, so equal locations are never built twice.
  uint64_t LocationFor(const StackSamples& run, const std::vector<StackFrame>& frames, size_t first,
                       size_t last) {
    const uint64_t address = run.nodes[frames[first].node].address;
    pb::Location* loc = out_->add_location();
    loc->set_id(uint64_t(out_->location_size()));
    loc->set_address(address);
    int64_t mapping = MappingOf(address);
    if (mapping >= 0) loc->set_mapping_id(uint64_t(mapping + 1));
    MappingStats unused;
    MappingStats& st = mapping >= 0 ? stats_[size_t(mapping)] : unused;
    bool named = true;
    for (size_t k = first; k <= last; ++k) {
      const NodeInfo& n = run.nodes[frames[k].node];
      // An address the symbolizer could not name still gets its own function
      // ("libfoo.so+0x1234", as pprof-tool's reports show it): without a Line, readers that
      // cannot symbolize it either lump all of a stripped library into one "[libfoo.so]" row.
      if (n.file.empty() && IsUnsymbolizedName(n.name)) named = false;
      pb::Line* line = loc->add_line();
      line->set_function_id(FunctionFor(n));
      line->set_line(n.line);
      if (!n.file.empty()) st.files = true;
      if (n.line > 0) st.line_numbers = true;
    }
    ++st.locations;
    if (named) ++st.with_lines;  // has_functions stays false where a reader could do better
    if (loc->line_size() > 1) st.inline_frames = true;
    return loc->id();
  }

  google::protobuf::Arena
      arena_;  // one block list for the many small messages: cheap to build and free
  pb::Profile* out_ = google::protobuf::Arena::CreateMessage<pb::Profile>(&arena_);
  std::unordered_map<std::string_view, int64_t> strings_;
  std::unordered_map<std::pair<std::string_view, std::string_view>, uint64_t, ViewPairHash>
      functions_;
  std::vector<const Mapping*> mappings_;  // in output order (id = index + 1)
  std::vector<size_t> order_;             // indexes into mappings_, by start address
  std::vector<MappingStats> stats_;
};

}  // namespace

bool EncodeProfileProto(const Profile& profile, Symbolizer& symbolizer,
                        const ProtoWriteOptions& options, std::string* out, std::string* error) {
  std::vector<ExportedType> types;
  for (const ExportedType& t : kHeapTypes) {
    const bool inuse = t.type == SampleType::kInuseObjects || t.type == SampleType::kInuseSpace;
    if (inuse || !options.heapcheck) types.push_back(t);
  }
  if (ExportsRecordedVariance(profile, options)) {  // after Go's four, as the runtime writes them
    for (int i = 0; i < prof::kVarianceValueCount; ++i) {
      const prof::ProfileValueType& v = prof::kVarianceValues[i].type;
      types.push_back({kHeapTypes[i].type, v.type, v.unit, /*variance=*/true});
    }
  }
  if (HasStackResidency(profile)) {  // tcmalloc's names for the same values
    types.push_back({SampleType::kResidentSpace, "resident_space", "bytes"});
    types.push_back({SampleType::kSwappedSpace, "swapped_space", "bytes"});
    types.push_back({SampleType::kStrandedSpace, "stranded_space", "bytes"});
  }
  ProtoBuilder builder(profile, options.main_binary);
  PipelineOptions po = options.pipeline;
  po.view.sample_type = SampleType::kInuseSpace;  // any: all_values keeps the four
  po.view.granularity = Granularity::kAddresses;
  po.all_values = true;
  StackSamples run;
  if (!BuildStackSamples(profile, symbolizer, po, &run, error)) return false;
  builder.AddRun(run, types);
  *out = builder.Finish(types, profile.sample_period, options.gzip);
  return true;
}

}  // namespace heapkit::pprof
