#include "pprof-tool/cli/options.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

namespace heapkit::pprof {
namespace {

// Options that take no value, or whose value is optional and must be given with '='.
const char* const kLongNames[] = {
    "help", "text", "top", "traces", "list", "collapsed", "callgrind", "raw", "symbols", "dot",
    "svg", "png", "pdf", "ps", "web", "flamegraph", "icicle", "output", "inuse_space",
    "inuse_objects", "alloc_space", "alloc_objects", "show_bytes", "base", "heapcheck",
    "functions", "lines", "files", "addresses", "focus", "ignore", "hide", "show", "nodecount",
    "nodefraction", "edgefraction", "cum", "no_drop_allocator", "noinlines", "o"};

bool IsElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {0};
  return in.read(magic, 4) && memcmp(magic, "\x7f" "ELF", 4) == 0;
}

}  // namespace

const char* UsageLine() {
  return "usage: pprof-tool [options] [<program>] <profile> [<profile>...]   (--help for details)";
}

int ParseCommandLine(int argc, const char* const* argv, CliOptions* o) {
  // Normalize Go-style "-text", "-top=5" to "--text", "--top=5"; bare "--top" -> "--top=0";
  // "--flamegraph[=file]" / "--icicle[=file]" handled here (optional value).
  std::set<std::string> names(std::begin(kLongNames), std::end(kLongNames));
  std::vector<std::string> args;
  args.push_back(argc > 0 ? argv[0] : "pprof-tool");
  bool flame = false, icicle = false;
  std::string flame_file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 2 && a[0] == '-' && a[1] != '-') {
      std::string name = a.substr(1, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 1);
      if (names.count(name) && name != "o") a = "-" + a;
    }
    if (a == "--top") a = "--top=0";
    if (a == "--flamegraph" || a.rfind("--flamegraph=", 0) == 0 || a == "--icicle" ||
        a.rfind("--icicle=", 0) == 0) {
      bool is_flame = a.rfind("--flamegraph", 0) == 0;
      (is_flame ? flame : icicle) = true;
      size_t eq = a.find('=');
      if (eq != std::string::npos) flame_file = a.substr(eq + 1);
      continue;
    }
    args.push_back(a);
  }

  CLI::App app{
      "pprof-tool: heap profile reports (heapkit). Reads legacy heap profiles written by heapkit "
      "and gperftools (heapprofile, heap_v2/<rate>, heap/<rate>, growth, leak-check *-end.heap), "
      "symbolizes them with libdw and prints reports.\n\n"
      "  pprof-tool ./server /tmp/prof.0003.heap              text report (default)\n"
      "  pprof-tool --top=10 --alloc_space /tmp/prof.0003.heap  binaries from the memory map\n"
      "  pprof-tool --base=/tmp/prof.0001.heap ./server /tmp/prof.0009.heap   growth since .0001\n"
      "Go-style single-dash spellings (-top=10, -text) are accepted too.",
      "pprof-tool"};
  app.set_help_flag("-h,--help", "Print this help and exit. E.g. --help");
  app.get_formatter()->column_width(34);

  // Reports.
  bool text = false, traces = false, collapsed = false, callgrind = false, raw = false,
       symbols = false, dot = false, svg = false, png = false, pdf = false, ps = false, web = false;
  int top = -1;
  std::string list;
  app.add_flag("--text", text, "Text report: flat flat% sum% cum cum% name (default). E.g. --text ./prog x.heap")->group("Reports");
  app.add_option("--top", top, "Like --text, at most N rows (bare --top: all rows). E.g. --top=10")
      ->group("Reports");
  app.add_flag("--traces", traces, "Every distinct stack with its value, largest first. E.g. --traces --lines")->group("Reports");
  app.add_option("--list", list, "Annotated source of functions matching a regex. E.g. --list='^Parse'")
      ->group("Reports");
  app.add_flag("--collapsed", collapsed, "Folded stacks 'main;f;g 1234' for flamegraph.pl etc.")
      ->group("Reports");
  app.add_flag("--callgrind", callgrind, "Callgrind format for kcachegrind. E.g. --callgrind > out.cg")
      ->group("Reports");
  app.add_flag("--raw", raw, "Symbolized self-contained profile, readable without the binaries. E.g. --raw -o s.heap")
      ->group("Reports");
  app.add_flag("--symbols", symbols,
               "Read maps lines and hex addresses from stdin, print '0x<addr> <name>' per address. "
               "E.g. cat maps addrs | pprof-tool --symbols")
      ->group("Reports");
  app.add_flag("--dot", dot, "Call graph in DOT. E.g. --dot | dot -Tsvg")->group("Graphs");
  app.add_flag("--svg", svg, "Call graph as SVG. E.g. --svg --output=heap.svg")->group("Graphs");
  app.add_flag("--png", png, "Call graph as PNG. E.g. --png -o heap.png")->group("Graphs");
  app.add_flag("--pdf", pdf, "Call graph as PDF. E.g. --pdf -o heap.pdf")->group("Graphs");
  app.add_flag("--ps", ps, "Call graph as PostScript. E.g. --ps -o heap.ps")->group("Graphs");
  app.add_flag("--web", web, "Call graph as SVG in a temp file, opened with $BROWSER. E.g. --web")->group("Graphs");
  // Documented here; parsed above because their value is optional.
  bool dummy_flame = false, dummy_icicle = false;
  app.add_flag("--flamegraph", dummy_flame,
               "Flame graph SVG; --flamegraph=<file> writes to <file>. E.g. --flamegraph=f.svg")
      ->group("Graphs");
  app.add_flag("--icicle", dummy_icicle, "Icicle graph SVG (flame graph, root on top). E.g. --icicle=i.svg")
      ->group("Graphs");
  app.add_option("--output,-o", o->output, "Write the report to a file instead of stdout. E.g. --output=g.svg")
      ->group("Graphs");
  app.add_option("--nodecount", o->nodecount, "Show at most N nodes (graphs: default 80; text: all). E.g. --nodecount=20")
      ->group("Graphs");
  app.add_option("--nodefraction", o->nodefraction, "Drop nodes with |cum| <= this fraction of the total (0.005). E.g. --nodefraction=0")
      ->group("Graphs");
  app.add_option("--edgefraction", o->edgefraction, "Graphs: drop edges <= this fraction of the total (0.001). E.g. --edgefraction=0.01")
      ->group("Graphs");

  // Values.
  bool inuse_space = false, inuse_objects = false, alloc_space = false, alloc_objects = false;
  app.add_flag("--inuse_space", inuse_space, "Bytes in use (default). E.g. --inuse_space")->group("Values");
  app.add_flag("--inuse_objects", inuse_objects, "Objects in use. E.g. --inuse_objects --top=5")->group("Values");
  app.add_flag("--alloc_space", alloc_space, "Bytes allocated since start, freed or not. E.g. --alloc_space")->group("Values");
  app.add_flag("--alloc_objects", alloc_objects, "Objects allocated since start. E.g. --alloc_objects")->group("Values");
  app.add_flag("--show_bytes", o->show_bytes, "Exact byte counts instead of B/kB/MB. E.g. --show_bytes")->group("Values");
  app.add_option("--base", o->base, "Subtract this profile (repeatable). E.g. --base=prof.0001.heap")
      ->allow_extra_args(false)
      ->group("Values");
  app.add_flag("--heapcheck", o->heapcheck, "The profiles are leak-checker dumps: report leaks. E.g. --heapcheck ./prog /tmp/prog.123._main_-end.heap")
      ->group("Values");

  // Granularity and filters.
  bool functions = false, lines = false, files = false, addresses = false;
  app.add_flag("--functions", functions, "One node per function (default). E.g. --functions")->group("Granularity");
  app.add_flag("--lines", lines, "One node per source line. E.g. --lines --top=20")->group("Granularity");
  app.add_flag("--files", files, "One node per source file. E.g. --files")->group("Granularity");
  app.add_flag("--addresses", addresses, "One node per instruction address. E.g. --addresses")->group("Granularity");
  app.add_option("--focus", o->focus, "Only stacks with a frame matching the regex. E.g. --focus=Parse")
      ->group("Filters");
  app.add_option("--ignore", o->ignore, "Drop stacks with a frame matching the regex. E.g. --ignore=^std::")
      ->group("Filters");
  app.add_option("--hide", o->hide, "Remove frames matching the regex from stacks. E.g. --hide=^std::")->group("Filters");
  app.add_option("--show", o->show, "Keep only frames matching the regex. E.g. --show=^myapp::")->group("Filters");
  app.add_flag("--cum", o->cum, "Sort by cumulative value instead of flat. E.g. --top=10 --cum")->group("Filters");
  app.add_flag("--noinlines", o->noinlines,
               "Attribute inlined code to the function it was inlined into. E.g. --noinlines --top=10")->group("Filters");
  app.add_flag("--no_drop_allocator", o->keep_allocator_frames,
               "Keep malloc/operator new/allocator frames at the leaf. E.g. --no_drop_allocator")->group("Filters");

  std::vector<std::string> positional;
  app.add_option("files", positional, "[<program>] <profile>...: profiles are summed. E.g. ./prog a.heap b.heap");

  try {
    std::vector<std::string> rev(args.rbegin(), args.rend() - 1);
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    fprintf(stderr, "pprof-tool: %s\n%s\n", e.what(), UsageLine());
    return 2;
  }

  auto usage_error = [](const std::string& msg) {
    fprintf(stderr, "pprof-tool: %s\n%s\n", msg.c_str(), UsageLine());
    return 2;
  };

  int reports = int(text) + (top >= 0) + traces + !list.empty() + collapsed + callgrind + raw +
                symbols + dot + svg + png + pdf + ps + web + flame + icicle;
  if (reports > 1) return usage_error("choose one report (--text, --top, --traces, --list, --svg, ...)");
  if (top >= 0) { o->report = ReportKind::kTop; o->top_n = top; }
  if (traces) o->report = ReportKind::kTraces;
  if (!list.empty()) { o->report = ReportKind::kList; o->list_regex = list; }
  if (collapsed) o->report = ReportKind::kCollapsed;
  if (callgrind) o->report = ReportKind::kCallgrind;
  if (raw) o->report = ReportKind::kRaw;
  if (symbols) o->report = ReportKind::kSymbols;
  auto render = [&](bool on, RenderFormat f) {
    if (on) { o->report = ReportKind::kRender; o->render_format = f; }
  };
  render(dot, RenderFormat::kDot);
  render(svg, RenderFormat::kSvg);
  render(png, RenderFormat::kPng);
  render(pdf, RenderFormat::kPdf);
  render(ps, RenderFormat::kPs);
  render(web, RenderFormat::kWeb);
  render(flame, RenderFormat::kFlameGraph);
  render(icicle, RenderFormat::kIcicle);
  if ((flame || icicle) && !flame_file.empty()) {
    if (!o->output.empty() && o->output != flame_file) {
      return usage_error("--flamegraph=<file> and --output=<file> name different files");
    }
    o->output = flame_file;
  }
  if (top < -1) return usage_error("--top: expected N >= 0");

  int values = int(inuse_space) + inuse_objects + alloc_space + alloc_objects;
  if (values > 1) return usage_error("choose one of --inuse_space, --inuse_objects, --alloc_space, --alloc_objects");
  if (inuse_objects) o->sample_type = SampleType::kInuseObjects;
  if (alloc_space) o->sample_type = SampleType::kAllocSpace;
  if (alloc_objects) o->sample_type = SampleType::kAllocObjects;
  if (o->heapcheck && (alloc_space || alloc_objects)) {
    return usage_error("--heapcheck reports leaked (in-use) memory; --alloc_* does not apply");
  }

  int gran = int(functions) + lines + files + addresses;
  if (gran > 1) return usage_error("choose one of --functions, --lines, --files, --addresses");
  if (lines) o->granularity = Granularity::kLines;
  if (files) o->granularity = Granularity::kFiles;
  if (addresses) o->granularity = Granularity::kAddresses;

  if (o->nodecount < -1) return usage_error("--nodecount: expected N >= 0");
  if (!(o->nodefraction >= 0 && o->nodefraction <= 1)) return usage_error("--nodefraction: expected a fraction in [0, 1]");
  if (!(o->edgefraction >= 0 && o->edgefraction <= 1)) return usage_error("--edgefraction: expected a fraction in [0, 1]");

  if (o->report == ReportKind::kSymbols) {
    if (positional.size() > 1) return usage_error("--symbols takes at most one <program>");
    if (!positional.empty()) o->program = positional[0];
    return -1;
  }
  if (positional.empty()) return usage_error("no profile given");
  if (positional.size() >= 2 && IsElf(positional[0])) {
    o->program = positional[0];
    o->profiles.assign(positional.begin() + 1, positional.end());
  } else {
    o->profiles = positional;
  }
  return -1;
}

}  // namespace heapkit::pprof
