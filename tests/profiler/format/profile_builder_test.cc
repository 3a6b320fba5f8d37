// The one profile.proto builder (profiler/profile_builder.h) and the heap-text encoder on top
// of it (profiler/heap_profile_encoder.h), decoded with libprotobuf's classes of pprof's
// schema: what a sample, a location, a mapping and a function hold, and that the profile files
// and the HTTP endpoint (profiler/http/heap_profile_proto.h, through the runtime's hook) agree
// on the same text.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "alloc/sample_weight.h"
#include "profile.pb.h"
#include "profiler/format/heap_profile_encoder.h"
#include "profiler/format/heap_sample_values.h"
#include "profiler/http/heap_profile_proto.h"
#include "profiler/http/server_hooks.h"
#include "profiler/format/mapped_bytes.h"
#include "profiler/format/profile_builder.h"

namespace heapkit::prof {
namespace {

namespace pb = perftools::profiles;

pb::Profile Decode(const char* data, size_t size) {
  pb::Profile p;
  EXPECT_TRUE(p.ParseFromArray(data, static_cast<int>(size)));
  return p;
}
pb::Profile Decode(const MappedBytes& b) { return Decode(b.data(), b.size()); }

const std::string& Str(const pb::Profile& p, int64_t i) {
  return p.string_table(static_cast<int>(i));
}

std::vector<uint64_t> Addresses(const pb::Profile& p, const pb::Sample& s) {
  std::map<uint64_t, uint64_t> address;
  for (const pb::Location& l : p.location()) address[l.id()] = l.address();
  std::vector<uint64_t> out;
  for (uint64_t id : s.location_id()) out.push_back(address.at(id));
  return out;
}

int Frames(ProfileFrame* out, int max, const char* function, int line) {
  if (max < 2) return 0;
  out[0] = {"inlined_helper", nullptr, "helper.h", 7, 3};
  out[1] = {function, "_Z5outerv", "outer.cc", line, 10};
  return 2;
}

TEST(ProfileBuilder, SamplesLocationsMappingsAndNamedFrames) {
  static const ProfileValueType kTypes[] = {{"objects", "count"}, {"space", "bytes"}};
  ProfileBuilder b(kTypes, 2);
  int calls = 0;
  struct Ctx {
    int* calls;
  } ctx{&calls};
  b.SetNamer(LocationNamer{[](void* c, uint64_t address, ProfileFrame* out, int max) {
                             ++*static_cast<Ctx*>(c)->calls;
                             return address == 0x401233 ? Frames(out, max, "outer", 42) : 0;
                           },
                           &ctx});
  b.AddMapping(0x400000, 0x402000, 0x1000, "/bin/prog", "abcd");
  b.AddMapping(0x500000, 0x501000, 0, "/lib/libx.so", "");
  const uint64_t stack[] = {0x401234, 0x500010};
  const int64_t values[] = {3, 0};  // zeros kept
  const ProfileLabel labels[] = {{"bytes", nullptr, 64, nullptr}, {"kind", "new", 0, nullptr}};
  b.AddSample(stack, 2, values, labels, 2);
  b.AddSample(stack, 1, values, nullptr, 0);  // the same first location again: named once
  b.AddComment("# a note", 8);
  b.SetPeriod("space", "bytes", 524288);
  b.SetTimeNanos(5);
  b.SetDurationNanos(6);
  b.SetDefaultSampleType("space");
  MappedBytes out;
  ASSERT_TRUE(b.Finish(&out));
  EXPECT_EQ(calls, 2);  // one per distinct location
  const pb::Profile p = Decode(out);
  EXPECT_EQ(Str(p, 0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "space");
  ASSERT_EQ(p.sample_size(), 2);
  EXPECT_EQ(p.sample(0).value_size(), 2);
  EXPECT_EQ(p.sample(0).value(0), 3);
  EXPECT_EQ(Addresses(p, p.sample(0)), (std::vector<uint64_t>{0x401233, 0x50000f}));
  ASSERT_EQ(p.sample(0).label_size(), 2);
  EXPECT_EQ(Str(p, p.sample(0).label(0).key()), "bytes");
  EXPECT_EQ(p.sample(0).label(0).num(), 64);
  EXPECT_EQ(Str(p, p.sample(0).label(1).str()), "new");
  ASSERT_EQ(p.location_size(), 2);
  EXPECT_EQ(p.location(0).mapping_id(), 1u);
  EXPECT_EQ(p.location(1).mapping_id(), 2u);
  ASSERT_EQ(p.location(0).line_size(), 2);  // innermost inline frame first
  EXPECT_EQ(p.location(1).line_size(), 0);  // unnamed: the address alone
  ASSERT_EQ(p.function_size(), 2);
  const pb::Function& outer = p.function(1);
  EXPECT_EQ(Str(p, outer.name()), "outer");
  EXPECT_EQ(Str(p, outer.system_name()), "_Z5outerv");
  EXPECT_EQ(Str(p, outer.filename()), "outer.cc");
  EXPECT_EQ(outer.start_line(), 10);
  EXPECT_EQ(Str(p, p.function(0).system_name()), "inlined_helper");  // none given: the name
  EXPECT_EQ(p.location(0).line(1).line(), 42);
  ASSERT_EQ(p.mapping_size(), 2);
  EXPECT_EQ(Str(p, p.mapping(0).filename()), "/bin/prog");
  EXPECT_EQ(Str(p, p.mapping(0).build_id()), "abcd");
  EXPECT_EQ(p.mapping(0).file_offset(), 0x1000u);
  EXPECT_TRUE(p.mapping(0).has_functions() && p.mapping(0).has_inline_frames());
  EXPECT_FALSE(p.mapping(1).has_functions() || p.mapping(1).has_line_numbers());
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_EQ(Str(p, p.comment(0)), "# a note");
  EXPECT_EQ(p.period(), 524288);
  EXPECT_EQ(Str(p, p.period_type().type()), "space");
  EXPECT_EQ(p.time_nanos(), 5);
  EXPECT_EQ(p.duration_nanos(), 6);
  EXPECT_EQ(Str(p, p.default_sample_type()), "space");
}

TEST(ProfileBuilder, ManyLocationsAndFunctionsRehash) {
  static const ProfileValueType kTypes[] = {{"objects", "count"}};
  ProfileBuilder b(kTypes, 1);
  b.SetNamer(LocationNamer{[](void*, uint64_t address, ProfileFrame* out, int) {
                             static char name[32];
                             snprintf(name, sizeof name, "f%llu",
                                      static_cast<unsigned long long>(address % 5000));
                             out[0] = {name, nullptr, "x.cc", 1, 1};
                             return 1;
                           },
                           nullptr});
  const int64_t one[] = {1};
  for (uint64_t pc = 1; pc <= 20000; ++pc) {
    const uint64_t stack[] = {pc + 1, (pc % 7) + 1};
    b.AddSample(stack, 2, one, nullptr, 0);
  }
  MappedBytes out;
  ASSERT_TRUE(b.Finish(&out));
  const pb::Profile p = Decode(out);
  EXPECT_EQ(p.sample_size(), 20000);
  EXPECT_EQ(p.location_size(), 20001);  // pcs 2..20001, and 1..7 minus those: just pc 1
  EXPECT_EQ(p.function_size(), 5000);   // names repeat every 5000 addresses
}

// A profile of this process: its own code's addresses in the stacks, its own maps.
std::string HeapText(int64_t period, int64_t inuse_count, int64_t inuse_bytes) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  char pcs[128];
  const auto here = reinterpret_cast<uintptr_t>(&HeapText);
  snprintf(pcs, sizeof pcs, "0x%llx 0x%llx", static_cast<unsigned long long>(here + 16),
           static_cast<unsigned long long>(here + 32));
  char text[1024];
  snprintf(text, sizeof text,
           "heap profile:   %lld: %lld [   9:   900] @ heap_v2/%lld\n"
           "# heapkit: dump time: 1700000009.000 pid 7\n"
           "%6lld: %8lld [     9:      900] @ %s\n"
           "     1:      100 [     1:      100] @ 0x10 0x20\n",
           static_cast<long long>(inuse_count + 1), static_cast<long long>(inuse_bytes + 100),
           static_cast<long long>(period), static_cast<long long>(inuse_count),
           static_cast<long long>(inuse_bytes), pcs);
  return std::string(text) + "\nMAPPED_LIBRARIES:\n" + all.str();
}

// What a consumer compares of two heap profiles: per sample its addresses, values and
// `bytes` label; the mappings; the period.
struct Shared {
  std::vector<std::string> samples;
  std::vector<std::string> mappings;
  std::string period;
  bool operator==(const Shared&) const = default;
};

Shared SharedFields(const pb::Profile& p) {
  Shared s;
  for (const pb::Sample& sample : p.sample()) {
    std::string line;
    for (uint64_t a : Addresses(p, sample)) line += std::to_string(a) + " ";
    line += "=";
    for (int i = 0; i < kHeapValueCount; ++i) line += " " + std::to_string(sample.value(i));
    for (const pb::Label& l : sample.label()) {
      line += " " + Str(p, l.key()) + ":" + std::to_string(l.num());
    }
    s.samples.push_back(line);
  }
  for (const pb::Mapping& m : p.mapping()) {
    s.mappings.push_back(std::to_string(m.memory_start()) + "-" + std::to_string(m.memory_limit()) +
                         "@" + std::to_string(m.file_offset()) + " " + Str(p, m.filename()) + " " +
                         Str(p, m.build_id()));
  }
  for (int i = 0; i < kHeapValueCount; ++i) {
    s.period += Str(p, p.sample_type(i).type()) + "/" + Str(p, p.sample_type(i).unit()) + " ";
  }
  s.period += Str(p, p.period_type().type()) + "/" + Str(p, p.period_type().unit()) + " " +
              std::to_string(p.period());
  return s;
}

pb::Profile FileProfile(const std::string& text) {
  HeapProtoOptions file;  // as proto_profile_file.cc writes the dumps and peak profiles
  file.lifetimes = true;
  file.comments = true;
  MappedBytes out;
  EXPECT_EQ(HeapTextToProto(text.data(), text.size(), file, &out, nullptr), HeapProtoStatus::kOk);
  return Decode(out);
}

pb::Profile EndpointProfile(const std::string& text, const std::string& baseline = "",
                            http::HeapTotals* totals_out = nullptr) {
  http::ServerHooks hooks;
  hooks.heap_profile_proto = &WriteHeapProto;  // as profiler/http_endpoint.cc sets it
  std::string proto, error;
  http::HeapTotals totals;
  EXPECT_TRUE(http::HeapProfileToProto(hooks, text, baseline, http::HeapView::kHeap, 1, 0, &proto,
                                       &totals, &error))
      << error;
  if (totals_out != nullptr) *totals_out = totals;
  return Decode(proto.data(), proto.size());
}

TEST(HeapTextToProto, TheFilesAndTheEndpointAgreeOnTheSameText) {
  const std::string text = HeapText(524288, 3, 3000);
  const pb::Profile file = FileProfile(text);
  const pb::Profile endpoint = EndpointProfile(text);
  const Shared a = SharedFields(file), b = SharedFields(endpoint);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.mappings, b.mappings);
  EXPECT_EQ(a.period, b.period);
  ASSERT_EQ(a.samples.size(), 2u);
  EXPECT_FALSE(a.mappings.empty());
  // The values are the un-sampled line, truncated (heap_sample_values.h).
  const alloc::Unsampled inuse = alloc::UnsampleLine(3, 3000, 524288);
  EXPECT_EQ(file.sample(0).value(kInuseSpace), static_cast<int64_t>(inuse.bytes));
  EXPECT_EQ(file.sample(0).value(kInuseObjects), static_cast<int64_t>(inuse.count));
  // What only one of them has: the files' comments, the endpoint's names of this binary's code.
  EXPECT_EQ(file.comment_size(), 1);
  EXPECT_EQ(endpoint.comment_size(), 0);
  EXPECT_EQ(file.function_size(), 0);
  EXPECT_GT(endpoint.function_size(), 0);
}

TEST(HeapTextToProto, EndpointDeltaSubtractsTheBaselinePerStack) {
  const std::string before = HeapText(1, 2, 200), after = HeapText(1, 5, 500);
  http::HeapTotals totals;
  const pb::Profile delta = EndpointProfile(after, before, &totals);
  // The stack of 0x10 0x20 is the same in both: it cancels; the other grew by 3 objects.
  ASSERT_EQ(delta.sample_size(), 1);
  EXPECT_EQ(delta.sample(0).value(kInuseObjects), 3);
  EXPECT_EQ(delta.sample(0).value(kInuseSpace), 300);
  EXPECT_EQ(delta.sample(0).value(kAllocObjects), 0);
  EXPECT_EQ(totals.inuse_bytes, 300);
  EXPECT_EQ(totals.stacks, 2u);
}

// A sampled dump's variance lines become four more sample types on the same samples, after
// Go's four (default inuse_space kept); a record without a line gets zeros; a delta, none.
TEST(HeapTextToProto, VarianceLinesBecomeVarianceSampleTypes) {
  const std::string text =
      "heap profile:      4:     4000 [     4:     4000] @ heap_v2/524288\n"
      "# heapkit: variance 87.5 274877906944.25 87.5 0.4\n"
      "     3:     3000 [     3:     3000] @ 0x0000000000000010 0x0000000000000020\n"
      "     1:     1000 [     1:     1000] @ 0x0000000000000030\n";
  const pb::Profile p = FileProfile(text);
  ASSERT_EQ(p.sample_type_size(), kHeapValueCount + kVarianceValueCount);
  std::vector<std::string> types;
  for (const pb::ValueType& t : p.sample_type())
    types.push_back(Str(p, t.type()) + "/" + Str(p, t.unit()));
  EXPECT_EQ(types, (std::vector<std::string>{
                       "alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                       "inuse_space/bytes", "alloc_objects_variance/count^2",
                       "alloc_space_variance/bytes^2", "inuse_objects_variance/count^2",
                       "inuse_space_variance/bytes^2"}));
  EXPECT_EQ(Str(p, p.default_sample_type()), "inuse_space");
  ASSERT_EQ(p.sample_size(), 2);
  EXPECT_EQ(p.sample(0).value(kHeapValueCount + 0), 88);            // alloc objects, rounded
  EXPECT_EQ(p.sample(0).value(kHeapValueCount + 1), 1);             // 0.4: not 0, so 1
  EXPECT_EQ(p.sample(0).value(kHeapValueCount + 2), 88);            // in-use objects
  EXPECT_EQ(p.sample(0).value(kHeapValueCount + 3), 274877906944);  // in-use bytes
  for (int i = 0; i < kVarianceValueCount; ++i)
    EXPECT_EQ(p.sample(1).value(kHeapValueCount + i), 0);
  EXPECT_EQ(p.comment_size(), 0);  // the variance lines are values, not comments
  // An exact dump has no variance lines and no variance types; a delta carries none either.
  EXPECT_EQ(FileProfile(HeapText(1, 3, 3000)).sample_type_size(), kHeapValueCount);
  EXPECT_EQ(EndpointProfile(text, text).sample_type_size(), kHeapValueCount);
}

TEST(HeapTextToProto, RefusesWhatIsNotAHeapProfile) {
  const std::string bad = "not a heap profile\n";
  http::ServerHooks hooks;
  hooks.heap_profile_proto = &WriteHeapProto;
  std::string proto, error;
  http::HeapTotals totals;
  EXPECT_FALSE(http::HeapProfileToProto(hooks, bad, "", http::HeapView::kHeap, 1, 0, &proto,
                                        &totals, &error));
  EXPECT_EQ(error, "the profiler's sample is not a heap profile");
  EXPECT_FALSE(http::HeapProfileTotals(hooks, bad, &totals, &error));
}

}  // namespace
}  // namespace heapkit::prof
