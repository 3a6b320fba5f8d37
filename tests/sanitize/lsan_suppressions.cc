// LeakSanitizer's built-in suppressions, linked into every instrumented executable of an ASan
// build (tests/sanitize/sanitize.cmake). They cover the libraries pprof-tool renders graphs with:
// graphviz keeps font and layout caches for the life of the process and leaks some layout
// nodes (dot_layout's mincross), and fontconfig/pango/cairo/glib cache what graphviz asks them
// for. A block allocated inside one of these libraries is not reported, whoever should have
// freed it; everything allocated from heapkit's own code still is.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgvc.so\n"
         "leak:libgvplugin_\n"
         "leak:libcgraph.so\n"
         "leak:libfontconfig.so\n"
         "leak:libpango\n"
         "leak:libcairo.so\n"
         "leak:libglib-2.0.so\n"
         "leak:libexpat.so\n";
}
