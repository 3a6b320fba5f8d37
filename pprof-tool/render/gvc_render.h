// In-process graphviz rendering: DOT text -> SVG/PNG/PDF/PS bytes through libgvc, with no `dot`
// child process.
//
// Pitfalls handled here:
//  - graphviz finds its layout/render plugins through a config file (config6a, written by
//    `dot -c`). Without it gvContext() still succeeds but gvLayout() fails with
//    `Layout type: "dot" not recognized`; we report exactly that plus the fix.
//  - gvRenderData()'s length parameter is `unsigned int*` in graphviz 2.42/2.43 (Debian 12) and
//    `size_t*` in newer releases; the type is deduced at compile time.
//  - graphviz prints errors to stderr by default; we capture them (agseterrf) and fold them into
//    the one-line error we return. The capture is process-global graphviz state, so calls must
//    not run concurrently (pprof-tool is single-threaded here).
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// Lays `dot` out with the "dot" engine and renders it as `format` ("svg", "png", "pdf", "ps",
// or any other graphviz -T format). On success stores the bytes in *image and returns true;
// otherwise stores one line (no trailing newline) naming the cause in *error.
bool RenderDotInProcess(std::string_view dot, std::string_view format, std::string* image,
                        std::string* error);

}  // namespace heapkit::pprof
