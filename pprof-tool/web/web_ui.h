// The web UI's views, independent of the HTTP server (tests call Handle directly):
//   /ui/ (or /)        call graph: the render library's SVG, inline, with pan/zoom
//   /ui/top            table flat flat% sum% cum cum% name, sortable
//   /ui/flamegraph     the render library's flame graph (its SVG from /ui/flamegraph.svg)
//   /ui/peek           the --peek/--tree text report (f= is the peek regex; none: whole tree)
//   /ui/source         the --list report (f= is the regex; none: the ten largest functions)
//   /ui/timeline       stacked in-use memory over the given dumps (timeline.h), or a runtime
//                      timeline's rows (runtime_timeline_chart.h) and its window's peak stacks
// Query parameters: view_query.h; they start from the command line's filters. Every view runs
// the pipeline on the loaded profile and is bounded like the CLI (--nodecount & co.; the call
// graph also by render.h's layout limits). Bad requests are answered 4xx with one line.
// The last kAnswersKept successful answers are kept (answer_cache.h): the profiles are loaded
// once and never change, so a view asked for again is answered without re-running anything.
// Handle may be called from several threads: kept answers and bad requests are answered at once,
// while views not kept are computed one at a time (the pipeline's symbolizer and graphviz are
// not thread-safe).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "pprof-tool/web/answer_cache.h"
#include "pprof-tool/web/view_query.h"
#include "pprof-tool/web/web_input.h"
#include "pprof-tool/web/web_response.h"

namespace heapkit::pprof {

// The web flame graph leaves out frames narrower than one pixel of the 1200 px picture (the
// CLI's --flamegraph draws down to 0.1 px): a browser lays out and scripts every SVG element,
// and sub-pixel frames are most of them (12,000 stacks: 32,743 frames, 7,718 of them 1 px or
// wider; headless Chromium shows all in 6-8 s, those in 2-3 s, an empty picture in 2 s). The
// picture says how many frames it leaves out.
inline constexpr double kWebFlameMinFramePx = 1.0;
inline constexpr size_t kAnswersKept = 8;
inline constexpr size_t kAnswerBytesKept = size_t{64} << 20;

class WebUi {
 public:
  explicit WebUi(const WebInput& input);
  WebResponse Handle(const std::string& path,
                     const std::multimap<std::string, std::string>& params);

 private:
  struct View;
  WebResponse Route(const View& v);
  // The pipeline's samples for `q` (nullptr and one line in *error for a bad query). The last
  // ones are kept: the flame graph page and its picture ask for the same.
  // The view shows a difference: base=N, or --base/--diff_base.
  bool Diff(const ViewQuery& q) const { return q.base >= 0 || in_.base != nullptr; }
  const StackSamples* Samples(const ViewQuery& q, Granularity granularity, std::string* error);
  WebResponse Graph(const View& v);
  WebResponse Top(const View& v);
  WebResponse FlameGraphPage(const View& v);
  WebResponse FlameGraphSvg(const View& v);
  WebResponse Peek(const View& v);
  WebResponse Source(const View& v);
  WebResponse Timeline(const View& v);
  WebResponse RuntimeTimelineView(const View& v);
  std::string TopTable(const StackSamples& samples, const ViewQuery& q,
                       std::vector<std::string>* legend);
  WebResponse Html(const View& v, const std::string& title, std::vector<std::string> legend,
                   const std::string& body);

  WebInput in_;
  ViewQuery defaults_;
  std::mutex answers_mutex_;   // guards answers_
  std::mutex pipeline_mutex_;  // one view computed at a time (Route and what it uses)
  AnswerCache answers_{kAnswersKept, kAnswerBytesKept};
  std::string memo_key_;  // granularity and normalized query of memo_
  bool memo_valid_ = false;
  StackSamples memo_;
};

}  // namespace heapkit::pprof
