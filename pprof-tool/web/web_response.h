// One answer of the web UI: HTTP status, content type and body. Errors are one line of text.
#pragma once

#include <string>

namespace heapkit::pprof {

struct WebResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
};

}  // namespace heapkit::pprof
