// profile.proto writer, reader, gzip framing and --sample_index, over synthetic profiles and
// hand-made hostile messages (built with the generated classes of the same schema).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "profile.pb.h"
#include "pprof-tool/proto/function_names.h"
#include "pprof-tool/proto/gzip_io.h"
#include "pprof-tool/load/profile_file.h"
#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/proto/profile_reader.h"
#include "pprof-tool/proto/profile_writer.h"
#include "pprof-tool/proto/sample_index.h"
#include "pprof-tool/proto/utf8.h"
#include "profiler/http/gzip.h"

namespace heapkit::pprof {
namespace {

namespace pb = perftools::profiles;

// The one gzip writer (profiler/http/gzip.h), as a string.
std::string Gzipped(std::string_view data) {
  std::string out;
  EXPECT_TRUE(prof::http::Gzip(data, &out));
  return out;
}

class FakeSymbolizer : public Symbolizer {
 public:
  std::map<uint64_t, std::vector<SourceFrame>> table;
  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    auto it = table.find(pc);
    if (it != table.end()) return it->second;
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)pc);
    SourceFrame f;
    f.function = buf;
    return table[pc] = {f};
  }
};

SourceFrame Frame(const char* fn, const char* file, int line, bool inlined = false,
                  int start_line = 0) {
  SourceFrame f;
  f.function = fn;
  f.file = file;
  f.line = line;
  f.inlined = inlined;
  f.start_line = start_line;
  f.module = "/bin/prog";
  return f;
}

// Two stacks: leaf 0x1000 (Leaf, inlined into Outer at the same pc) <- 0x2000 (main), and
// 0x3000 (Other) <- 0x2000 (main). PCs in Profile are return addresses (lookup pc + 1).
struct Fixture {
  Profile profile;
  FakeSymbolizer symbolizer;
  Fixture() {
    profile.kind = ProfileKind::kHeapProfile;
    profile.sample_period = 524288;
    Mapping m;
    m.start = 0x1000;
    m.limit = 0x4000;
    m.perms = "r-xp";
    m.path = "/bin/prog";
    profile.mappings.push_back(m);
    RawSample a;
    a.pcs = {0x1001, 0x2001};
    a.raw = a.value = {2, 200, 5, 500};
    RawSample b;
    b.pcs = {0x3001, 0x2001};
    b.raw = b.value = {0, 0, 1, 64};
    profile.samples = {a, b};
    symbolizer.table[0x1000] = {Frame("Leaf", "leaf.h", 3, true, 2),
                                Frame("Outer", "outer.cc", 10, false, 8)};
    symbolizer.table[0x2000] = {Frame("main", "main.cc", 20)};  // declaration line unknown
    symbolizer.table[0x3000] = {Frame("Other", "other.cc", 7)};
  }
  std::string Encode(ProtoWriteOptions options = ProtoWriteOptions()) {
    std::string bytes, error;
    EXPECT_TRUE(EncodeProfileProto(profile, symbolizer, options, &bytes, &error)) << error;
    return bytes;
  }
};

const std::string& Str(const pb::Profile& p, int64_t i) { return p.string_table(int(i)); }

TEST(ProtoWriter, HeapSampleTypesPeriodAndDefault) {
  Fixture fx;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  ASSERT_EQ(p.sample_type_size(), 4);
  const char* names[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
  const char* units[] = {"count", "bytes", "count", "bytes"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Str(p, p.sample_type(i).type()), names[i]);
    EXPECT_EQ(Str(p, p.sample_type(i).unit()), units[i]);
  }
  EXPECT_EQ(Str(p, p.default_sample_type()), "inuse_space");
  EXPECT_EQ(Str(p, p.period_type().type()), "space");
  EXPECT_EQ(Str(p, p.period_type().unit()), "bytes");
  EXPECT_EQ(p.period(), 524288);
  EXPECT_EQ(p.string_table(0), "");
  std::set<std::string> unique(p.string_table().begin(), p.string_table().end());
  EXPECT_EQ(unique.size(), size_t(p.string_table_size())) << "strings are deduplicated";
  ASSERT_EQ(p.sample_size(), 2);
  EXPECT_EQ(std::vector<int64_t>(p.sample(0).value().begin(), p.sample(0).value().end()),
            (std::vector<int64_t>{5, 500, 2, 200}));
  EXPECT_EQ(std::vector<int64_t>(p.sample(1).value().begin(), p.sample(1).value().end()),
            (std::vector<int64_t>{1, 64, 0, 0}));
}

TEST(ProtoWriter, InlineFramesAreLinesOfOneLocationInnermostFirst) {
  Fixture fx;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  ASSERT_EQ(p.location_size(), 3);  // 0x1000, 0x2000, 0x3000: one per PC
  const pb::Location& leaf = p.location(int(p.sample(0).location_id(0)) - 1);
  EXPECT_EQ(leaf.address(), 0x1000u);
  ASSERT_EQ(leaf.line_size(), 2);
  const pb::Function& inner = p.function(int(leaf.line(0).function_id()) - 1);
  const pb::Function& outer = p.function(int(leaf.line(1).function_id()) - 1);
  EXPECT_EQ(Str(p, inner.name()), "Leaf");
  EXPECT_EQ(Str(p, inner.system_name()), "Leaf");
  EXPECT_EQ(Str(p, inner.filename()), "leaf.h");
  EXPECT_EQ(leaf.line(0).line(), 3);
  EXPECT_EQ(Str(p, outer.name()), "Outer");
  EXPECT_EQ(leaf.line(1).line(), 10);
  ASSERT_EQ(p.mapping_size(), 1);
  const pb::Mapping& m = p.mapping(0);
  EXPECT_EQ(m.memory_start(), 0x1000u);
  EXPECT_EQ(m.memory_limit(), 0x4000u);
  EXPECT_EQ(Str(p, m.filename()), "/bin/prog");
  EXPECT_TRUE(m.has_functions() && m.has_filenames() && m.has_line_numbers() &&
              m.has_inline_frames());
  EXPECT_EQ(leaf.mapping_id(), m.id());
}

TEST(ProtoWriter, UnsymbolizedFramesHaveTheirOwnFunctionAndClearHasFunctions) {
  Fixture fx;
  fx.symbolizer.table.erase(0x3000);  // -> "0x3000"
  fx.symbolizer.table.erase(0x2000);  // -> "0x2000"
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  const pb::Location& other = p.location(int(p.sample(1).location_id(0)) - 1);
  EXPECT_EQ(other.address(), 0x3000u);
  ASSERT_EQ(other.line_size(), 1);
  const pb::Function& named = p.function(int(other.line(0).function_id()) - 1);
  EXPECT_EQ(Str(p, named.name()), "0x3000");  // each address its own function, not one row
  std::set<uint64_t> functions;
  for (const pb::Location& l : p.location()) {
    if (l.address() == 0x2000 || l.address() == 0x3000) functions.insert(l.line(0).function_id());
  }
  EXPECT_EQ(functions.size(), 2u);
  EXPECT_FALSE(p.mapping(0).has_functions());  // a reader with the binary may name them
  EXPECT_TRUE(IsUnsymbolizedName("libc.so.6+0x1a2b"));
  EXPECT_TRUE(IsUnsymbolizedName("0x4005d0"));
  EXPECT_FALSE(IsUnsymbolizedName("operator+"));
  EXPECT_FALSE(IsUnsymbolizedName("main"));
}

TEST(ProtoWriter, MappingsCodeOnlyUnlessAFileHasNoCodeMapping) {
  Fixture fx;
  Mapping data = fx.profile.mappings[0];
  data.start = 0x4000;
  data.limit = 0x5000;
  data.perms = "rw-p";  // data of /bin/prog, which has a code mapping: not exported
  Mapping lib;
  lib.start = 0x7000;
  lib.limit = 0x8000;
  lib.perms = "r--p";  // hand-made maps without 'x': the file's mappings are kept
  lib.path = "/lib/libx.so";
  fx.profile.mappings.push_back(data);
  fx.profile.mappings.push_back(lib);
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  ASSERT_EQ(p.mapping_size(), 2);
  EXPECT_EQ(Str(p, p.mapping(0).filename()), "/bin/prog");
  EXPECT_EQ(Str(p, p.mapping(1).filename()), "/lib/libx.so");
}

TEST(ProtoWriter, FunctionNameIsTheReportNameSystemNameTheFullName) {
  FunctionNames simplified = NamesForProto("ns::Box::Make", "ns::Box<int>::Make(unsigned long)");
  EXPECT_EQ(simplified.name, "ns::Box::Make");
  EXPECT_EQ(simplified.system_name, "ns::Box<int>::Make(unsigned long)");
  FunctionNames c = NamesForProto("main", "");  // no longer form: both are the report name
  EXPECT_EQ(c.name, "main");
  EXPECT_EQ(c.system_name, "main");
}

TEST(ProtoWriter, DeterministicBytes) {
  Fixture a, b;
  EXPECT_EQ(a.Encode(), b.Encode());
  EXPECT_EQ(Gzipped(a.Encode()), Gzipped(b.Encode()));
}

TEST(ProtoWriter, GzipOptionSerializesStraightIntoTheSameGzipBytes) {
  Fixture fx;
  ProtoWriteOptions o;
  o.gzip = true;
  const std::string file = fx.Encode(o);
  EXPECT_TRUE(IsGzip(file));
  EXPECT_EQ(file, Gzipped(fx.Encode()));  // what the file was before: same bytes
  std::string plain, error;
  ASSERT_TRUE(GunzipBounded(file, 1 << 20, &plain, &error)) << error;
  EXPECT_EQ(plain, fx.Encode());
  // Larger than the gzip stream's buffers: several blocks in and out.
  pb::Profile big;
  for (int i = 0; i < 200000; ++i) big.add_string_table("name" + std::to_string(i % 5000));
  EXPECT_EQ(GzipSerialize(big), Gzipped(big.SerializeAsString()));
}

TEST(ProtoWriter, FiltersAndHeapcheckApplyBeforeWriting) {
  Fixture fx;
  ProtoWriteOptions o;
  o.pipeline.view.ignore = "^Other$";
  o.heapcheck = true;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode(o)));
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(Str(p, p.sample_type(0).type()), "inuse_objects");
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "inuse_space");
  ASSERT_EQ(p.sample_size(), 1);
  EXPECT_EQ(p.sample(0).value(1), 200);
  o.pipeline.view.ignore = "(";
  std::string bytes, error;
  EXPECT_FALSE(EncodeProfileProto(fx.profile, fx.symbolizer, o, &bytes, &error));
  EXPECT_NE(error.find("--ignore"), std::string::npos) << error;
}

TEST(ProtoWriter, UnsampledValuesAreRounded) {
  Fixture fx;
  fx.profile.samples[0].value.inuse_bytes = 200.6;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  EXPECT_EQ(p.sample(0).value(3), 201);
}

TEST(ProtoWriter, FunctionStartLineIsTheDeclarationLineZeroWhenUnknown) {
  Fixture fx;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  std::map<std::string, int64_t> start;
  for (const pb::Function& f : p.function()) start[Str(p, f.name())] = f.start_line();
  EXPECT_EQ(start,
            (std::map<std::string, int64_t>{{"Leaf", 2}, {"Outer", 8}, {"main", 0}, {"Other", 0}}));
}

// A heapkit dump's recorded variances (`# heapkit: variance` before each record): two records
// of stack A (two size keys) and one of stack B. `pid` goes into the dump-time line.
std::string DumpWithVariances(int pid, int64_t scale) {
  auto v = [&](int64_t x) { return std::to_string(x * scale); };
  return "heap profile: 4: 409600 [ 6: 614400] @ heap_v2/524288\n"
         "# heapkit: dump time: 1795718736.075 pid " +
         std::to_string(pid) +
         "\n"
         "# heapkit: variance " +
         v(3) + " " + v(5000000000000) + " " + v(7) + " " + v(11000000000000) +
         "\n"
         " 2: 200000 [ 3: 300000] @ 0x1001 0x2001\n"
         "# heapkit: variance " +
         v(2) + " " + v(1000000000000) + " 4.4 " + v(2000000000000) +
         "\n"
         " 1: 8192 [ 2: 16384] @ 0x1001 0x2001\n"
         "# heapkit: variance 0.25 " +
         v(400000000000) + " 0.5 " + v(600000000000) +
         "\n"
         " 1: 201408 [ 1: 298016] @ 0x3001 0x2001\n"
         "\nMAPPED_LIBRARIES:\n"
         "00001000-00004000 r-xp 00000000 00:00 0    /bin/prog\n"
         "# heapkit: end of dump\n";
}

Profile ParsedDump(const std::string& text) {
  Profile p;
  ParseError e;
  EXPECT_TRUE(ParseProfileText(text, "prof.0002.heap", &p, &e)) << e.Message();
  EXPECT_TRUE(p.variance_recorded);
  return p;
}

// Per stack (its leaf location's address): the values of the sample types named `*_variance`,
// by type name.
std::map<uint64_t, std::map<std::string, int64_t>> VariancesByLeaf(const pb::Profile& p) {
  std::map<uint64_t, uint64_t> address;
  for (const pb::Location& l : p.location()) address[l.id()] = l.address();
  std::map<uint64_t, std::map<std::string, int64_t>> out;
  for (const pb::Sample& s : p.sample()) {
    for (int i = 0; i < p.sample_type_size(); ++i) {
      const std::string& type = Str(p, p.sample_type(i).type());
      if (type.find("_variance") != std::string::npos)
        out[address[s.location_id(0)]][type] += s.value(i);
    }
  }
  return out;
}

// pprof-tool --proto of a dump with recorded variances writes them as the runtime does: the four
// *_variance types after Go's four, per stack the sum of its records' (rounded, at least 1), and
// reading the file back gives the same per-stack variances and the same note.
TEST(ProtoWriter, RecordedVariancesAreWrittenAndReadBack) {
  Fixture fx;
  fx.profile = ParsedDump(DumpWithVariances(4242, 1));
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  ASSERT_EQ(p.sample_type_size(), 8);
  const char* names[] = {"alloc_objects_variance", "alloc_space_variance", "inuse_objects_variance",
                         "inuse_space_variance"};
  const char* units[] = {"count^2", "bytes^2", "count^2", "bytes^2"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Str(p, p.sample_type(4 + i).type()), names[i]);
    EXPECT_EQ(Str(p, p.sample_type(4 + i).unit()), units[i]);
  }
  EXPECT_EQ(Str(p, p.default_sample_type()), "inuse_space");
  const auto by_leaf = VariancesByLeaf(p);
  ASSERT_EQ(by_leaf.size(), 2u);
  const std::map<std::string, int64_t>& a = by_leaf.begin()->second;  // 0x1000: two records
  EXPECT_EQ(a.at("inuse_objects_variance"), 5);
  EXPECT_EQ(a.at("inuse_space_variance"), 6000000000000);
  EXPECT_EQ(a.at("alloc_objects_variance"), 11);  // 7 + 4.4, rounded
  EXPECT_EQ(a.at("alloc_space_variance"), 13000000000000);
  const std::map<std::string, int64_t>& b = by_leaf.rbegin()->second;  // 0x3000
  EXPECT_EQ(b.at("inuse_objects_variance"), 1);  // 0.25: a sampled value is never exact
  EXPECT_EQ(b.at("inuse_space_variance"), 400000000000);

  Profile back;
  ParseError error;
  ASSERT_TRUE(DecodeProfileProto(fx.Encode(), "x.pb", &back, &error)) << error.Message();
  EXPECT_TRUE(back.variance_recorded);
  StackSamples before, after;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(fx.profile, fx.symbolizer, PipelineOptions{}, &before, &err));
  ASSERT_TRUE(BuildStackSamples(back, fx.symbolizer, PipelineOptions{}, &after, &err));
  ASSERT_EQ(after.samples.size(), before.samples.size());
  for (size_t i = 0; i < before.samples.size(); ++i)
    EXPECT_DOUBLE_EQ(after.samples[i].variance, before.samples[i].variance);
  EXPECT_EQ(after.variance_source, VarianceSource::kRecorded);
}

// No variance in the file unless the profiler recorded it: an exact profile, a sampled file
// without the lines (pprof-tool would derive them at the rows' mean sizes: its display, not
// data), a --heapcheck export.
TEST(ProtoWriter, NoVarianceTypesWithoutRecordedVariances) {
  Fixture fx;  // heap_v2 values, no variance recorded
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  EXPECT_EQ(p.sample_type_size(), 4);
  fx.profile = ParsedDump(DumpWithVariances(4242, 1));
  ProtoWriteOptions heapcheck;
  heapcheck.heapcheck = true;
  ASSERT_TRUE(p.ParseFromString(fx.Encode(heapcheck)));
  EXPECT_EQ(p.sample_type_size(), 2);
  const std::string text = DumpWithVariances(4242, 1);
  std::string without;  // the same dump with its variance lines dropped
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at) + 1;
    if (text.compare(at, 19, "# heapkit: variance") != 0) without += text.substr(at, end - at);
    at = end;
  }
  ParseError e;
  fx.profile = Profile();
  ASSERT_TRUE(ParseProfileText(without, "prof.0002.heap", &fx.profile, &e)) << e.Message();
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  EXPECT_EQ(p.sample_type_size(), 4);
}

// --base of a dump of another process: the samples are independent, so the difference's
// variance is the sum of both sides' (per stack, as written). A dump of the same process shares
// the samples of objects live at both dumps: the sum is no variance of the difference, and none
// is written.
TEST(ProtoWriter, BaseOfAnotherProcessAddsVariancesOfTheSameProcessWritesNone) {
  Fixture fx;
  fx.profile = ParsedDump(DumpWithVariances(4242, 3));
  const Profile other_process = ParsedDump(DumpWithVariances(777, 1));
  SubtractBase(&other_process, /*diff_base=*/false, &fx.profile);
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  ASSERT_EQ(p.sample_type_size(), 8);
  const auto by_leaf = VariancesByLeaf(p);
  ASSERT_EQ(by_leaf.size(), 2u);
  EXPECT_EQ(by_leaf.begin()->second.at("inuse_space_variance"), 4 * 6000000000000);
  EXPECT_EQ(by_leaf.rbegin()->second.at("alloc_space_variance"), 4 * 600000000000);

  fx.profile = ParsedDump(DumpWithVariances(4242, 3));
  const Profile same_process = ParsedDump(DumpWithVariances(4242, 1));
  SubtractBase(&same_process, /*diff_base=*/false, &fx.profile);
  ASSERT_TRUE(p.ParseFromString(fx.Encode()));
  EXPECT_EQ(p.sample_type_size(), 4);
}

TEST(ProtoReader, RoundTripKeepsValuesNamesFilesAndLines) {
  Fixture fx;
  Profile back;
  ParseError error;
  ASSERT_TRUE(DecodeProfileProto(fx.Encode(), "x.pb", &back, &error)) << error.Message();
  ASSERT_EQ(back.samples.size(), 2u);
  EXPECT_EQ(back.samples[0].pcs, (std::vector<uint64_t>{0x1001, 0x2001}));
  EXPECT_EQ(back.samples[0].value.inuse_bytes, 200);
  EXPECT_EQ(back.samples[0].value.alloc_objects, 5);
  EXPECT_EQ(back.sample_period, 524288u);
  EXPECT_TRUE(back.symbols_partial);
  EXPECT_EQ(back.default_sample_type, "inuse_space");
  ASSERT_EQ(back.mappings.size(), 1u);
  EXPECT_EQ(back.mappings[0].path, "/bin/prog");
  const EmbeddedSymbol* leaf = nullptr;
  for (const EmbeddedSymbol& s : back.symbols) {
    if (s.pc == 0x1000) leaf = &s;
  }
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->frames, (std::vector<std::string>{"Leaf", "Outer"}));
  EXPECT_EQ(leaf->files, (std::vector<std::string>{"leaf.h", "outer.cc"}));
  EXPECT_EQ(leaf->lines, (std::vector<int>{3, 10}));
  EXPECT_EQ(leaf->start_lines, (std::vector<int>{2, 8}));
}

// A minimal valid message to break in one place per test.
pb::Profile Valid() {
  pb::Profile p;
  p.add_string_table("");
  p.add_string_table("inuse_space");
  p.add_string_table("bytes");
  p.add_string_table("f");
  auto* t = p.add_sample_type();
  t->set_type(1);
  t->set_unit(2);
  auto* f = p.add_function();
  f->set_id(1);
  f->set_name(3);
  auto* l = p.add_location();
  l->set_id(1);
  l->set_address(0x10);
  l->add_line()->set_function_id(1);
  auto* s = p.add_sample();
  s->add_location_id(1);
  s->add_value(8);
  return p;
}

std::string DecodeError(const std::string& bytes) {
  Profile out;
  ParseError error;
  if (DecodeProfileProto(bytes, "h.pb", &out, &error)) return "";
  return error.Message();
}

TEST(ProtoReader, ValidMinimalMessage) { EXPECT_EQ(DecodeError(Valid().SerializeAsString()), ""); }

TEST(ProtoReader, HostileMessagesFailWithOneLine) {
  struct Case {
    const char* what;
    std::string bytes;
    const char* expected;
  };
  std::vector<Case> cases;
  cases.push_back({"bad varint",
                   std::string("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12),
                   "malformed varint"});
  {
    std::string s = Valid().SerializeAsString();
    cases.push_back({"truncated", s.substr(0, s.size() - 2), "truncated"});
  }
  {
    pb::Profile p = Valid();
    p.mutable_sample_type(0)->set_type(99);
    cases.push_back(
        {"string index", p.SerializeAsString(), "sample_type.type to index the string table"});
  }
  {
    pb::Profile p = Valid();
    p.mutable_function(0)->set_name(-1);
    cases.push_back({"negative string index", p.SerializeAsString(), "function.name"});
  }
  {
    pb::Profile p = Valid();
    p.mutable_sample(0)->add_location_id(7);
    cases.push_back(
        {"missing location", p.SerializeAsString(), "existing locations, found location id 7"});
  }
  {
    pb::Profile p = Valid();
    p.mutable_location(0)->mutable_line(0)->set_function_id(9);
    cases.push_back({"missing function", p.SerializeAsString(), "function id 9"});
  }
  {
    pb::Profile p = Valid();
    p.mutable_location(0)->set_mapping_id(4);
    cases.push_back({"missing mapping", p.SerializeAsString(), "mapping id 4"});
  }
  {
    pb::Profile p = Valid();
    *p.add_location() = p.location(0);
    cases.push_back({"duplicate location", p.SerializeAsString(), "unique location ids"});
  }
  {
    pb::Profile p = Valid();
    p.mutable_sample(0)->add_value(1);
    cases.push_back({"value count", p.SerializeAsString(), "1 values per sample"});
  }
  {
    pb::Profile p = Valid();
    p.set_string_table(0, "x");
    cases.push_back({"string 0", p.SerializeAsString(), "string_table[0]"});
  }
  {
    pb::Profile p = Valid();
    p.set_string_table(1, "cpu");
    cases.push_back({"not heap", p.SerializeAsString(), "expected a heap profile"});
  }
  // 10^7 empty strings: rejected by the field scan before anything is allocated for them.
  std::string many = Valid().SerializeAsString();
  many.reserve(many.size() + 20000000);
  for (int i = 0; i < 10000000; ++i) many.append("\x32\x00", 2);
  cases.push_back(
      {"1e7 strings", std::move(many), "expected at most 4194304 strings, found 10000004"});
  for (const Case& c : cases) {
    std::string msg = DecodeError(c.bytes);
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.what << ": " << msg;
    EXPECT_EQ(msg.rfind("h.pb: ", 0), 0u) << c.what << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << c.what;
  }
}

TEST(ProtoReader, SniffingTellsProtobufFromText) {
  EXPECT_TRUE(LooksLikeProfileProto(Valid().SerializeAsString()));
  EXPECT_FALSE(LooksLikeProfileProto("heap profile:   1:   8 [   1:   8] @ heapprofile\n"));
  EXPECT_FALSE(LooksLikeProfileProto("\n# comment\nheap_v2/524288\n"));
  EXPECT_FALSE(LooksLikeProfileProto(std::string(64, '\0')));
  EXPECT_FALSE(
      LooksLikeProfileProto("\x7f"
                            "ELF\x02\x01\x01"));
}

TEST(Gzip, RoundTripTruncationAndBomb) {
  std::string data(1 << 20, 'x');
  std::string z = Gzipped(data), out, error;
  ASSERT_TRUE(IsGzip(z));
  ASSERT_TRUE(GunzipBounded(z, 2 << 20, &out, &error)) << error;
  EXPECT_EQ(out, data);
  EXPECT_FALSE(GunzipBounded(z.substr(0, z.size() / 2), 2 << 20, &out, &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  std::string bomb = Gzipped(std::string(64 << 20, '\0'));  // 64 MiB -> ~64 KiB
  EXPECT_FALSE(GunzipBounded(bomb, 8 << 20, &out, &error));
  EXPECT_NE(error.find("gzip bomb"), std::string::npos) << error;
  EXPECT_TRUE(out.empty());
  std::string corrupt = z;
  corrupt[20] ^= 0x55;
  corrupt[21] ^= 0x55;
  EXPECT_FALSE(GunzipBounded(corrupt, 2 << 20, &out, &error));
}

TEST(ProfileLoader, DetectsByContentNotName) {
  Fixture fx;
  char dir[] = "/tmp/proto_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::string path = std::string(dir) + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  };
  const std::string legacy = "heap profile: 1: 8 [ 1: 8] @ heapprofile\n1: 8 [ 1: 8] @ 0x10\n";
  for (const auto& [name, bytes] :
       std::vector<std::pair<std::string, std::string>>{{"a.heap", Gzipped(fx.Encode())},
                                                        {"b.txt", fx.Encode()},
                                                        {"c.pb.gz", legacy},
                                                        {"d.pb", Gzipped(legacy)}}) {
    Profile p;
    ParseError error;
    std::string path = write(name, bytes);
    EXPECT_TRUE(LoadProfileFile(path, &p, &error)) << name << ": " << error.Message();
    EXPECT_FALSE(p.samples.empty()) << name;
    unlink(path.c_str());
  }
  ProtoLimits small;
  small.max_bytes = 1 << 20;
  std::string path = write("bomb.pb.gz", Gzipped(std::string(16 << 20, '\0')));
  Profile p;
  ParseError error;
  EXPECT_FALSE(LoadProfileFile(path, &p, &error, small));
  EXPECT_NE(error.Message().find("gzip bomb"), std::string::npos) << error.Message();
  unlink(path.c_str());
  rmdir(dir);
}

TEST(SampleIndex, NamesNumbersDefaultsAndMissingTypes) {
  Profile legacy;
  legacy.file = "l.heap";
  SampleType t = SampleType::kInuseSpace;
  std::string error;
  ASSERT_TRUE(ResolveSampleIndex(legacy, "1", &t, &error)) << error;
  EXPECT_EQ(t, SampleType::kAllocSpace);
  ASSERT_TRUE(ResolveSampleIndex(legacy, "inuse_objects", &t, &error));
  EXPECT_EQ(t, SampleType::kInuseObjects);
  EXPECT_FALSE(ResolveSampleIndex(legacy, "4", &t, &error));
  EXPECT_FALSE(ResolveSampleIndex(legacy, "cpu", &t, &error));
  EXPECT_EQ(error,
            "l.heap: no sample type 'cpu' (the profile has alloc_objects, alloc_space, "
            "inuse_objects, inuse_space)");
  Profile proto;
  proto.file = "p.pb.gz";
  proto.sample_types = {"alloc_objects", "alloc_space"};
  proto.default_sample_type = "alloc_space";
  t = SampleType::kInuseSpace;
  ASSERT_TRUE(ResolveSampleIndex(proto, "", &t, &error)) << error;
  EXPECT_EQ(t, SampleType::kAllocSpace);
  EXPECT_FALSE(ResolveSampleIndex(proto, "inuse_space", &t, &error));
  EXPECT_EQ(error,
            "p.pb.gz: no sample type 'inuse_space' (the profile has alloc_objects, "
            "alloc_space)");
}

}  // namespace
}  // namespace heapkit::pprof

namespace heapkit::pprof {
namespace {

TEST(Utf8, InvalidBytesBecomeTheirLatin1Characters) {
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("caf\xe9"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(ToValidUtf8("caf\xe9::Run"), "caf\xc3\xa9::Run");
  EXPECT_EQ(ToValidUtf8("ok \xc3\xa9 \xff"), "ok \xc3\xa9 \xc3\xbf");
  EXPECT_NE(ToValidUtf8("caf\xe9"), ToValidUtf8("caf\xe8"));  // distinct names stay distinct
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\x80")));
}

}  // namespace
}  // namespace heapkit::pprof
