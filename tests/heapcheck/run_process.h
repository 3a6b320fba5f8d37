// Runs a child process with extra environment, a timeout, and captured stdout/stderr.
#pragma once

#include <string>
#include <vector>

namespace heapkit::test {

struct ProcessResult {
  int exit_code = -1;  // exit status, or -1 if killed by a signal / timed out
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// env: "NAME=value" entries added to a cleaned copy of the environment (HEAPCHECK, HEAP_CHECK_*,
// HEAPPROFILE, LD_PRELOAD and TCMALLOC_* are removed first).
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         int timeout_seconds);

}  // namespace heapkit::test
