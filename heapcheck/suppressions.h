// HEAPCHECK_SUPPRESSIONS: a file of `leak:<pattern>` lines, and the glob its patterns match
// symbolized frames with (`*`, `?`; matched anywhere unless anchored by `^` / `$`).
//
// The file is read with plain system calls into mmap'd memory (mmap_array.h): the report runs
// after the world is restarted, but nothing here needs the heap. A bad file gives one line on
// stderr and no suppressions; malformed lines are skipped, the first named and the others
// counted.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/mmap_array.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::check {

class Suppressions {
 public:
  // Loads the patterns of `path`. False (one line logged) if the file is unusable.
  bool Load(const char* path);

  bool empty() const { return patterns_.empty(); }

  // Whether a pattern matches the function, file or module name of `frame`.
  bool Matches(const pprof::SourceFrame& frame) const;

 private:
  struct Pattern {
    uint32_t offset;  // into text_
    uint32_t length;
  };
  bool ReadFile(const char* path, size_t* size);
  void ParseLines(const char* path, size_t size);

  MmapArray<char> text_;
  MmapArray<Pattern> patterns_;
};

// Glob with '*' and '?'; matches anywhere in text unless the pattern starts with '^' and/or
// ends with '$'. Exposed for tests.
bool SuppressionPatternMatches(const char* pattern, size_t pattern_length, const char* text,
                               size_t text_length);

}  // namespace heapkit::check
