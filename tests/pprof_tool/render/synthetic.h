// Synthetic inputs for the render tests: stack samples and hand-built call graphs, so the
// renderers are tested on exactly known values (independent of the parser and graph builder).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pprof-tool/graph/call_graph.h"
#include "pprof-tool/model/stack_samples.h"

namespace heapkit::pprof::testing {

class SamplesBuilder {
 public:
  explicit SamplesBuilder(ValueUnit unit = ValueUnit::kBytes) { s_.unit = unit; }

  // frames leaf first; a frame name ending in "*" is marked inlined into its caller.
  SamplesBuilder& Add(const std::vector<std::string>& frames, double value) {
    StackSample sample;
    for (std::string name : frames) {
      StackFrame f;
      if (!name.empty() && name.back() == '*') {
        name.pop_back();
        f.inlined = true;
      }
      f.node = Node(name);
      sample.frames.push_back(f);
    }
    sample.value = value;
    s_.total += value;
    s_.samples.push_back(std::move(sample));
    return *this;
  }
  SamplesBuilder& Type(std::string type) {
    s_.sample_type = std::move(type);
    return *this;
  }
  StackSamples Build() const { return s_; }

 private:
  uint32_t Node(const std::string& name) {
    auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(s_.nodes.size()));
    if (inserted) {
      NodeInfo info;
      info.name = name;
      s_.nodes.push_back(info);
    }
    return it->second;
  }
  StackSamples s_;
  std::map<std::string, uint32_t> ids_;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(double total, ValueUnit unit = ValueUnit::kBytes) {
    g_.total = total;
    g_.unit = unit;
  }
  GraphBuilder& Node(const std::string& name, double flat, double cum) {
    GraphNode n;
    n.info.name = name;
    n.flat = flat;
    n.cum = cum;
    n.sample_node = static_cast<uint32_t>(g_.nodes.size());
    ids_[name] = static_cast<uint32_t>(g_.nodes.size());
    g_.nodes.push_back(n);
    g_.kept_flat += flat;
    return *this;
  }
  GraphBuilder& Edge(const std::string& caller, const std::string& callee, double weight,
                     bool inlined = false, bool residual = false) {
    GraphEdge e;
    e.caller = ids_.at(caller);
    e.callee = ids_.at(callee);
    e.weight = weight;
    e.inlined = inlined;
    e.residual = residual;
    const auto index = static_cast<uint32_t>(g_.edges.size());
    g_.nodes[e.caller].out_edges.push_back(index);
    g_.nodes[e.callee].in_edges.push_back(index);
    g_.edges.push_back(e);
    return *this;
  }
  GraphBuilder& Dropped(int nodes, double node_cutoff, int edges, double edge_cutoff) {
    g_.dropped_nodes = nodes;
    g_.dropped_node_cutoff = node_cutoff;
    g_.dropped_edges = edges;
    g_.dropped_edge_cutoff = edge_cutoff;
    return *this;
  }
  CallGraph Build() const { return g_; }

 private:
  CallGraph g_;
  std::map<std::string, uint32_t> ids_;
};

// Names that break naive DOT/XML writers.
inline const char* const kNastyNames[] = {
    "std::vector<std::pair<int, std::string>>::push_back(std::pair<int, std::string>&&)",
    "operator<<(std::ostream&, Foo<\"q\"> const&)",
    "ns::{lambda()#1}::operator()() const",
    "Pipe|Name{with}[brackets]",
    "back\\slash\\N\\G\\l\\",
    "multi\nline\rname\ttab",
    "bad utf8 \xff\xfe end",
    "caf\xc3\xa9::\xe2\x82\xac<T>",
    "quote\"at\"end\"",
    "amp&amp;<lt>&gt;'apos'",
};

// A small program's call graph: 1 MiB total, an inlined call, a residual edge, nasty names.
inline CallGraph PlainGraph() {
  return GraphBuilder(1048576)
      .Node("std::vector<std::pair<int, std::string>>::push_back(std::pair<int, std::string>&&)",
            400000, 400000)
      .Node("Parser<\"x\">::{lambda()#1}::operator()", 300000, 300000)
      .Node("operator<<(std::ostream&, Foo const&)", 200000, 250000)
      .Node("Server::Handle(Request const&)", 100000, 700000)
      .Node("weird|name{}\"quoted\"\\back\nnewline", 48576, 48576)
      .Node("main", 0, 1048576)
      .Edge("main", "Server::Handle(Request const&)", 700000)
      .Edge("Server::Handle(Request const&)",
            "std::vector<std::pair<int, std::string>>::push_back(std::pair<int, std::string>&&)",
            400000, /*inlined=*/true)
      .Edge("Server::Handle(Request const&)", "operator<<(std::ostream&, Foo const&)", 200000)
      .Edge("main", "Parser<\"x\">::{lambda()#1}::operator()", 300000, false, /*residual=*/true)
      .Edge("operator<<(std::ostream&, Foo const&)", "weird|name{}\"quoted\"\\back\nnewline", 48576)
      .Edge("main", "operator<<(std::ostream&, Foo const&)", 50000)
      .Dropped(3, 5242, 2, 1048)
      .Build();
}

// A --base diff: growth, shrink and a node whose children cancel out.
inline CallGraph DiffGraph() {
  return GraphBuilder(-100000)
      .Node("Cache::Grow()", 300000, 300000)
      .Node("Pool::Release()", -500000, -500000)
      .Node("Worker::Run()", 100000, -100000)
      .Node("main", 0, -100000)
      .Edge("main", "Worker::Run()", -100000)
      .Edge("Worker::Run()", "Cache::Grow()", 300000)
      .Edge("Worker::Run()", "Pool::Release()", -500000)
      .Build();
}

// A leak-check profile: leak sites have flat values, callers only cum.
inline CallGraph LeakGraph() {
  return GraphBuilder(4096, ValueUnit::kBytes)
      .Node("LeakyAlloc(int)", 3072, 3072)
      .Node("MakeNode()", 1024, 1024)
      .Node("Build()", 0, 4096)
      .Node("main", 0, 4096)
      .Edge("main", "Build()", 4096)
      .Edge("Build()", "LeakyAlloc(int)", 3072)
      .Edge("Build()", "MakeNode()", 1024)
      .Build();
}

inline std::vector<std::string> TestLegend() {
  return {"File: synthetic", "Type: inuse_space",
          "Showing nodes accounting for 1MB, 100% of 1MB total", "Dropped 3 nodes (cum <= 5.1kB)",
          "Dropped 2 edges (freq <= 1kB)"};
}

}  // namespace heapkit::pprof::testing
