// Writes sample pictures into <dir>: flame.svg, icicle.svg, diff.svg (flame graphs of a
// synthetic, deterministic ~600-stack C++ profile), callgraph.svg/.png/.dot (the synthetic call
// graph of synthetic.h). Used by chromium_check.sh and for looking at the output by eye.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pprof-tool/render/dot_writer.h"
#include "pprof-tool/render/flame_graph.h"
#include "pprof-tool/render/gvc_render.h"
#include "pprof-tool/report/output.h"
#include "synthetic.h"

namespace {

using heapkit::pprof::StackSamples;

// A fixed pseudo-random profile: main -> a few subsystems -> helpers -> allocation sites.
StackSamples SyntheticProfile(bool diff) {
  const char* const layer1[] = {"Server::Run()", "Parser<Json>::Parse(std::string_view)",
                                "Cache<std::string, Blob>::Insert(std::string const&, Blob&&)",
                                "std::thread::_State_impl<Worker>::_M_run()"};
  const char* const layer2[] = {"Request::Decode()",
                                "Buffer::Grow(unsigned long)",
                                "std::vector<Token>::_M_realloc_insert<Token>(Token&&)",
                                "Arena::NewBlock()",
                                "{lambda(int)#1}::operator()(int) const",
                                "HashMap::Rehash()"};
  const char* const leaves[] = {"operator new(unsigned long)",
                                "std::__new_allocator<char>::allocate", "Blob::Blob(unsigned long)",
                                "strdup", "Node* MakeNode<Node>()"};
  heapkit::pprof::testing::SamplesBuilder b;
  b.Type(diff ? "inuse_space (diff)" : "inuse_space");
  uint64_t x = 88172645463325252ull;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 600; ++i) {
    std::vector<std::string> frames;
    frames.push_back(leaves[next() % 5]);
    const int depth = 1 + static_cast<int>(next() % 4);
    for (int d = 0; d < depth; ++d) frames.push_back(layer2[next() % 6]);
    frames.push_back(layer1[next() % 4]);
    frames.push_back("main");
    double value = static_cast<double>(1 + next() % 100000);
    if (diff && next() % 3 == 0) value = -value;
    b.Add(frames, value);
  }
  StackSamples s = b.Build();
  s.description = {"File: synthetic-server", std::string("Type: ") + s.sample_type};
  return s;
}

bool Write(const std::string& path, const std::string& bytes) {
  std::string error;
  if (!heapkit::pprof::WriteOutput(path, bytes, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output-dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  heapkit::pprof::FlameGraphOptions o;
  o.title = "Flame Graph: synthetic-server";
  o.legend = {"File: synthetic-server", "Type: inuse_space"};
  bool ok = Write(dir + "/flame.svg", WriteFlameGraphSvg(SyntheticProfile(false), o));
  o.icicle = true;
  ok = ok && Write(dir + "/icicle.svg", WriteFlameGraphSvg(SyntheticProfile(false), o));
  o.icicle = false;
  o.diff = true;
  o.title = "Flame Graph: synthetic-server (--base diff)";
  ok = ok && Write(dir + "/diff.svg", WriteFlameGraphSvg(SyntheticProfile(true), o));

  heapkit::pprof::DotStyle style;
  style.title = "synthetic";
  style.legend = heapkit::pprof::testing::TestLegend();
  const std::string dot = WriteDot(heapkit::pprof::testing::PlainGraph(), style);
  ok = ok && Write(dir + "/callgraph.dot", dot);
  for (const char* format : {"svg", "png"}) {
    std::string image, error;
    if (!heapkit::pprof::RenderDotInProcess(dot, format, &image, &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    ok = ok && Write(dir + "/callgraph." + format, image);
  }
  return ok ? 0 : 1;
}
