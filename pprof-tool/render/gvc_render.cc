#include "gvc_render.h"
#include "pprof-tool/tool_settings.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <type_traits>

namespace heapkit::pprof {

namespace {

// ---- compile-time adaptation to the graphviz version --------------------------------------

template <typename F>
struct FunctionArgs;
template <typename R, typename... A>
struct FunctionArgs<R (*)(A...)> {
  template <size_t I>
  using Arg = std::tuple_element_t<I, std::tuple<A...>>;
};

// unsigned int* (graphviz <= 2.x) or size_t* (newer): whatever gvRenderData takes.
using RenderLength = std::remove_pointer_t<FunctionArgs<decltype(&gvRenderData)>::template Arg<4>>;
static_assert(std::is_integral_v<RenderLength>, "unexpected gvRenderData signature");

// char* (older) or const char* (newer): whatever agusererrf takes.
using ErrorText = FunctionArgs<agusererrf>::template Arg<0>;

// ---- error capture --------------------------------------------------------------------------

std::string* g_captured = nullptr;  // graphviz's error sink while a render is running

int CaptureGraphvizMessage(ErrorText text) {
  if (g_captured != nullptr && text != nullptr) *g_captured += text;
  return 0;
}

class ScopedErrorCapture {
 public:
  explicit ScopedErrorCapture(std::string* sink) : previous_(agseterrf(CaptureGraphvizMessage)) {
    g_captured = sink;
  }
  ~ScopedErrorCapture() {
    agseterrf(previous_);
    g_captured = nullptr;
  }
  ScopedErrorCapture(const ScopedErrorCapture&) = delete;
  ScopedErrorCapture& operator=(const ScopedErrorCapture&) = delete;

 private:
  agusererrf previous_;
};

// Graphviz messages arrive in fragments ("Error", ": ", "Layout type: ..."), with newlines.
std::string OneLine(const std::string& text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// True if graphviz knows at least one plugin of `kind` (e.g. "layout").
bool HasPlugins(GVC_t* gvc, const char* kind, const char* wanted) {
  int count = 0;
  char** list = gvPluginList(gvc, kind, &count, nullptr);
  bool found = false;
  for (int i = 0; i < count; ++i) {
    if (wanted == nullptr || std::string_view(list[i]) == wanted) found = true;
    std::free(list[i]);
  }
  std::free(list);
  return found;
}

std::string PluginConfigHint() {
  std::string hint =
      "graphviz's plugin configuration is missing or stale; fix it by running `dot -c` as root";
  if (const char* dir = internal::ToolSettingText(ToolSetting("GVBINDIR")); dir != nullptr) {
    hint += " (GVBINDIR=";
    hint += dir;
    hint += " is set: that directory must hold the plugins and their config6a)";
  }
  return hint;
}

// One graphviz context for the process, never freed: graphviz's pango plugin remembers the last
// font name it laid out, a pointer into the font dictionary of the context that owned it, and
// compares it with the next name; after gvFreeContext that is a read of freed memory. (ASan found
// it on the second render in one process, as `--http` does for every graph view.)
GVC_t* ProcessContext() {
  static GVC_t* const gvc = gvContext();
  return gvc;
}

struct GraphHandle {
  Agraph_t* graph = nullptr;
  ~GraphHandle() {
    if (graph != nullptr) agclose(graph);
  }
};

}  // namespace

bool RenderDotInProcess(std::string_view dot, std::string_view format, std::string* image,
                        std::string* error) {
  std::string messages;
  ScopedErrorCapture capture(&messages);
  GVC_t* const gvc = ProcessContext();
  if (gvc == nullptr) {
    *error = "graphviz: gvContext() failed: " + OneLine(messages);
    return false;
  }
  GraphHandle graph;
  graph.graph = agmemread(std::string(dot).c_str());
  if (graph.graph == nullptr) {
    *error = "graphviz could not parse the generated DOT (a heapkit bug): " + OneLine(messages);
    return false;
  }
  if (gvLayout(gvc, graph.graph, "dot") != 0) {
    const bool no_plugin =
        !HasPlugins(gvc, "layout", "dot") || messages.find("not recognized") != std::string::npos;
    if (no_plugin) {
      *error = "graphviz: Layout type: \"dot\" not recognized: " + PluginConfigHint();
    } else {
      *error = "graphviz layout failed: " + OneLine(messages);
    }
    return false;
  }
  char* data = nullptr;
  RenderLength length = 0;
  const std::string format_z(format);
  const int rc = gvRenderData(gvc, graph.graph, format_z.c_str(), &data, &length);
  gvFreeLayout(gvc, graph.graph);
  if (rc != 0 || data == nullptr) {
    if (data != nullptr) gvFreeRenderData(data);
    if (messages.find("not recognized") != std::string::npos) {
      *error = "graphviz: Format: \"" + format_z + "\" not recognized: " + PluginConfigHint() +
               " (and that the graphviz package providing it is installed)";
    } else {
      *error = "graphviz could not render " + format_z + ": " + OneLine(messages);
    }
    return false;
  }
  image->assign(data, static_cast<size_t>(length));
  gvFreeRenderData(data);
  return true;
}

}  // namespace heapkit::pprof
