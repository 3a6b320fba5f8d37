// The web UI's views, independent of the HTTP server (tests call Handle directly):
//   /ui/ (or /)        call graph: the render library's SVG, inline, with pan/zoom
//   /ui/top            table flat flat% sum% cum cum% name, sortable
//   /ui/flamegraph     the render library's flame graph (its SVG from /ui/flamegraph.svg)
//   /ui/peek           the --peek/--tree text report (f= is the peek regex; none: whole tree)
//   /ui/source         the --list report (f= is the regex; none: the ten largest functions)
//   /ui/timeline       stacked in-use memory over the given dumps (timeline.h)
// Query parameters: view_query.h; they start from the command line's filters. Every view runs
// the pipeline on the loaded profile and is bounded like the CLI (--nodecount & co.; the call
// graph also by render.h's layout limits). Bad requests are answered 4xx with one line.
// Not thread-safe: the server serializes calls.
#pragma once

#include <map>
#include <string>

#include "pprof-tool/web/view_query.h"
#include "pprof-tool/web/web_input.h"

namespace heapkit::pprof {

struct WebResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
};

class WebUi {
 public:
  explicit WebUi(const WebInput& input);
  WebResponse Handle(const std::string& path,
                     const std::multimap<std::string, std::string>& params);

 private:
  struct View;
  bool Samples(const ViewQuery& q, Granularity granularity, StackSamples* out,
               std::string* error);
  WebResponse Graph(const View& v);
  WebResponse Top(const View& v);
  WebResponse FlameGraphPage(const View& v);
  WebResponse FlameGraphSvg(const View& v);
  WebResponse Peek(const View& v);
  WebResponse Source(const View& v);
  WebResponse Timeline(const View& v);
  WebResponse Html(const View& v, const std::string& title, std::vector<std::string> legend,
                   const std::string& body);

  WebInput in_;
  ViewQuery defaults_;
};

}  // namespace heapkit::pprof
