// The frame every HTML view shares: a menu bar (links to the views, and a GET form setting the
// query parameters, so the URL always names the view), the legend lines, then the view's body.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/web/view_query.h"

namespace heapkit::pprof {

struct Page {
  std::string view_path;            // "/ui/top" ...: the active menu entry and the form's action
  std::string title;                // <title> and heading
  ViewQuery query;                  // the form's values; links carry query.Encode()
  bool heapcheck = false;           // si offers the in-use types only
  bool timeline = false;            // several dumps: the Timeline entry is shown
  bool window = false;              // a runtime timeline: the form has its window field
  int latest_dump = -1;             // several dumps of one process: the latest (menu label)
  std::vector<std::string> legend;  // plain text lines
  std::string body_html;            // already escaped
};

std::string PageHtml(const Page& page);

// "<p class=error>message</p>" page body for views that cannot be drawn with this query.
std::string ErrorHtml(const std::string& message);

}  // namespace heapkit::pprof
