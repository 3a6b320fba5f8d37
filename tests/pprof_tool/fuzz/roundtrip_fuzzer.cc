// libFuzzer target: the runtime's legacy-format writer (profiler/format/legacy_writer) and
// pprof-tool's parser must agree on every profile the writer can produce. The input bytes choose
// the kind (heapprofile / heap_v2/<rate> / growthz), the records (counts in the writer's domain: 0
// <= n < 2^40, bytes 0 when n is 0) and their stacks (0..64 arbitrary 64-bit PCs); the profile is
// written through a MemorySink (with this process's real /proc/self/maps) and parsed back. Any
// disagreement — a parse error, a lost or extra record, a changed count or PC, header totals that
// are not the sums, a lost mapping — aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "pprof-tool/parse/legacy_parser.h"
#include "profiler/format/legacy_writer.h"

namespace {

struct Record {
  heapkit::prof::RecordCounts counts;
  std::vector<const void*> pcs;
};

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint64_t Take(int n) {  // n little-endian bytes, zeros past the end
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(pos_ < size_ ? data_[pos_++] : 0) << (8 * i);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Source {
  std::vector<Record> records;
};

void Visit(void* ctx, heapkit::prof::RecordVisitor visit, void* visit_ctx) {
  for (const Record& r : static_cast<Source*>(ctx)->records)
    visit(visit_ctx, r.counts, r.pcs.data(), static_cast<int>(r.pcs.size()));
}

[[noreturn]] void Die(const char* what, size_t index) {
  fprintf(stderr, "roundtrip mismatch: %s (record %zu)\n", what, index);
  abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heapkit;
  Bytes in(data, size);
  prof::LegacyProfile lp;
  const uint64_t kind = in.Take(1) % 3;
  lp.kind = kind == 0   ? prof::ProfileKind::kHeapExact
            : kind == 1 ? prof::ProfileKind::kHeapSampled
                        : prof::ProfileKind::kGrowth;
  lp.sample_rate = static_cast<int64_t>(in.Take(4));
  lp.write_mapped_libraries = in.Take(1) & 1;
  Source src;
  while (!in.empty() && src.records.size() < 256) {
    Record r;
    const uint64_t mask = (uint64_t{1} << 40) - 1;
    r.counts.inuse_count = static_cast<int64_t>(in.Take(5) & mask);
    r.counts.inuse_bytes = r.counts.inuse_count ? static_cast<int64_t>(in.Take(5) & mask) : 0;
    r.counts.alloc_count = static_cast<int64_t>(in.Take(5) & mask);
    r.counts.alloc_bytes = r.counts.alloc_count ? static_cast<int64_t>(in.Take(5) & mask) : 0;
    const int depth = static_cast<int>(in.Take(1) % 65);
    for (int i = 0; i < depth; ++i) r.pcs.push_back(reinterpret_cast<const void*>(in.Take(8)));
    src.records.push_back(std::move(r));
  }
  lp.source = &Visit;
  lp.source_ctx = &src;

  prof::MemorySink sink;
  if (!prof::WriteLegacyProfile(&sink, lp)) return 0;  // out of memory: nothing to compare
  std::string_view text(sink.data(), sink.size());
  pprof::Profile p;
  pprof::ParseError e;
  if (!pprof::ParseProfileText(text, "roundtrip.heap", &p, &e)) {
    fprintf(stderr, "%s\n--- written:\n%.*s\n", e.Message().c_str(),
            static_cast<int>(text.size() > 4000 ? 4000 : text.size()), text.data());
    Die("the parser rejects the writer's output", 0);
  }
  if (!p.warnings.empty()) Die(p.warnings[0].c_str(), 0);
  pprof::SampleValues sums;
  size_t k = 0;
  for (size_t i = 0; i < src.records.size(); ++i) {
    const Record& r = src.records[i];
    const auto& c = r.counts;
    if (lp.skip_empty_records && c.inuse_count == 0 && c.inuse_bytes == 0 && c.alloc_count == 0 &&
        c.alloc_bytes == 0)
      continue;
    if (k >= p.samples.size()) Die("record lost", i);
    const pprof::RawSample& s = p.samples[k++];
    if (s.raw.inuse_objects != double(c.inuse_count) ||
        s.raw.inuse_bytes != double(c.inuse_bytes) ||
        s.raw.alloc_objects != double(c.alloc_count) || s.raw.alloc_bytes != double(c.alloc_bytes))
      Die("counts changed", i);
    if (s.pcs.size() != r.pcs.size()) Die("stack depth changed", i);
    for (size_t j = 0; j < r.pcs.size(); ++j)
      if (s.pcs[j] != reinterpret_cast<uint64_t>(r.pcs[j])) Die("pc changed", i);
    sums += s.raw;
  }
  if (k != p.samples.size()) Die("extra records", k);
  if (p.header_totals.inuse_objects != sums.inuse_objects ||
      p.header_totals.inuse_bytes != sums.inuse_bytes ||
      p.header_totals.alloc_objects != sums.alloc_objects ||
      p.header_totals.alloc_bytes != sums.alloc_bytes)
    Die("header totals are not the sums of the records", 0);
  if (lp.write_mapped_libraries && p.mappings.empty()) Die("the memory map was lost", 0);
  return 0;
}
