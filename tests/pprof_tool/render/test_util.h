// Small helpers for the render tests: files, temp dirs, running the Python XML probe.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace heapkit::pprof::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A fresh directory under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/heapkit-render-test-XXXXXX";
    path_ = ::mkdtemp(templ);
  }
  ~TempDir() { (void)std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs a shell command (bounded by `timeout`), returns its stdout and exit status.
inline std::string RunCapture(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen(("timeout 60 " + command).c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

inline bool HavePython() {
  int status = 0;
  RunCapture(std::string(HEAPKIT_PYTHON) + " -c 'import xml.etree.ElementTree' 2>/dev/null",
             &status);
  return status == 0;
}

// Parses `file` as XML with python3 and returns the probe's report (see svg_probe.py).
inline std::string Probe(const std::string& mode, const std::string& file, int* status) {
  return RunCapture(
      std::string(HEAPKIT_PYTHON) + " " + HEAPKIT_SVG_PROBE + " " + mode + " '" + file + "'",
      status);
}

inline std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace heapkit::pprof::testing
