#include "profiler/format/heap_profile_text.h"

#include <string.h>

#include <string_view>

#include "alloc/internal/hex_digit.h"
#include "profiler/symbolize/maps_line.h"

namespace heapkit::prof {
namespace {

// A line of text and a cursor over it.
struct Cursor {
  const char* p;
  const char* end;

  void Spaces() {
    while (p < end && *p == ' ') ++p;
  }
  bool Take(char c) {
    Spaces();
    if (p >= end || *p != c) return false;
    ++p;
    return true;
  }
  bool Starts(const char* prefix) const {
    const size_t n = strlen(prefix);
    return static_cast<size_t>(end - p) >= n && memcmp(p, prefix, n) == 0;
  }
  bool Decimal(int64_t* out) {
    Spaces();
    if (p >= end || *p < '0' || *p > '9') return false;
    int64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
    *out = v;
    return true;
  }
  // A non-negative decimal number with an optional fraction and exponent ("12", "1.5",
  // "123e+7": legacy_writer.cc's AppendNumber), malloc-free.
  bool Number(double* out) {
    Spaces();
    if (p >= end || *p < '0' || *p > '9') return false;
    double v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
    if (p < end && *p == '.') {
      double scale = 1;
      for (++p; p < end && *p >= '0' && *p <= '9'; ++p) v += (*p - '0') * (scale /= 10);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      const bool negative = p < end && *p == '-';
      if (p < end && (*p == '+' || *p == '-')) ++p;
      int64_t exponent = 0;
      if (!Decimal(&exponent) || exponent > 400) return false;
      for (; exponent > 0; --exponent) v = negative ? v / 10 : v * 10;
    }
    *out = v;
    return true;
  }
  bool Hex(uint64_t* out) {
    Spaces();
    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    uint64_t v = 0;
    const char* start = p;
    for (; p < end; ++p) {
      const int d = internal::HexDigitValue(*p);
      if (d < 0) break;
      v = (v << 4) | static_cast<uint64_t>(d);
    }
    *out = v;
    return p > start;
  }
  // Hex words up to the end of the line or a '|'.
  int Pcs(uint64_t* pcs) {
    int n = 0;
    uint64_t pc;
    while (n < kMaxTextFrames && Hex(&pc)) pcs[n++] = pc;
    return n;
  }
};

Cursor NextLine(const char** at, const char* end) {
  const char* start = *at;
  const char* nl = static_cast<const char*>(memchr(start, '\n', static_cast<size_t>(end - start)));
  const char* line_end = nl != nullptr ? nl : end;
  *at = nl != nullptr ? nl + 1 : end;
  return Cursor{start, line_end};
}

// "heap profile: ... @ heap_v2/<R>" or "@ heapprofile".
bool Header(Cursor line, int64_t* period) {
  if (!line.Starts("heap profile:")) return false;
  const char* at = line.end;
  while (at > line.p && at[-1] != '@') --at;
  Cursor kind{at, line.end};
  kind.Spaces();
  *period = 1;
  if (kind.Starts("heap_v2/")) {
    kind.p += 8;
    if (!kind.Decimal(period) || *period < 1) *period = 1;
  }
  return true;
}

// "# heapkit: variance <inuse n> <inuse bytes> <alloc n> <alloc bytes>": the next record's
// (legacy_writer.h). False, *v untouched, for a line of another form.
bool Variance(Cursor line, HeapTextVariance* v) {
  line.p += strlen("# heapkit: variance ");
  HeapTextVariance read;
  if (!line.Number(&read.inuse_count) || !line.Number(&read.inuse_bytes) ||
      !line.Number(&read.alloc_count) || !line.Number(&read.alloc_bytes)) {
    return false;
  }
  *v = read;
  return true;
}

// "  a:  b [  c:  d] @ 0x1 0x2"; `variance`: the variance line before it, if any.
void Record(Cursor line, const HeapTextVariance* variance, HeapTextVisitor* visitor) {
  HeapTextRecord r{};
  r.variance = variance;
  if (!line.Decimal(&r.inuse_count) || !line.Take(':') || !line.Decimal(&r.inuse_bytes)) return;
  if (line.Take('[') && (!line.Decimal(&r.alloc_count) || !line.Take(':') ||
                         !line.Decimal(&r.alloc_bytes) || !line.Take(']'))) {
    return;
  }
  if (!line.Take('@')) return;
  uint64_t pcs[kMaxTextFrames];
  r.stack = {pcs, line.Pcs(pcs)};
  visitor->Record(r);
}

// "# heapkit: lifetime <bin ns> <same|cross|live> <count> <bytes> <est> @ <pcs> [| <pcs>]"
void Lifetime(Cursor line, HeapTextVisitor* visitor) {
  line.p += strlen("# heapkit: lifetime ");
  HeapTextLifetime l{};
  if (!line.Decimal(&l.bin_ns)) return;
  line.Spaces();
  l.kind = line.Starts("live")   ? HeapTextLifetime::kLive
           : line.Starts("same") ? HeapTextLifetime::kSameThread
                                 : HeapTextLifetime::kCrossThread;
  while (line.p < line.end && *line.p != ' ') ++line.p;
  if (!line.Decimal(&l.count) || !line.Decimal(&l.bytes) || !line.Decimal(&l.estimated_bytes) ||
      !line.Take('@')) {
    return;
  }
  uint64_t pcs[kMaxTextFrames], free_pcs[kMaxTextFrames];
  l.stack = {pcs, line.Pcs(pcs)};
  l.free_stack = {free_pcs, 0};
  if (l.kind != HeapTextLifetime::kLive && line.Take('|')) l.free_stack.depth = line.Pcs(free_pcs);
  visitor->Lifetime(l);
}

// "start-limit perms offset dev inode   path": executable file mappings only.
void MapsLine(Cursor line, HeapTextVisitor* visitor) {
  heapkit::MapsLine m;
  if (!ParseMapsLine(std::string_view(line.p, static_cast<size_t>(line.end - line.p)), &m) ||
      !m.executable || m.path.empty() || m.path[0] != '/') {
    return;
  }
  char path[4096];
  if (m.path.size() >= sizeof(path)) return;
  memcpy(path, m.path.data(), m.path.size());
  path[m.path.size()] = '\0';
  visitor->Mapping(HeapTextMapping{m.start, m.limit, m.offset, path, m.path.size()});
}

}  // namespace

bool ReadHeapTextPeriod(const char* text, size_t size, int64_t* period) {
  const char* at = text;
  return Header(NextLine(&at, text + size), period);
}

bool ReadHeapText(const char* text, size_t size, HeapTextVisitor* visitor) {
  const char* end = text + size;
  const char* at = text;
  int64_t period;
  if (!Header(NextLine(&at, end), &period)) return false;
  const char* body = at;
  const char* maps = end;  // the first line after MAPPED_LIBRARIES:
  while (at < end) {
    if (NextLine(&at, end).Starts("MAPPED_LIBRARIES:")) {
      maps = at;
      break;
    }
  }
  for (at = maps; at < end;) {  // mappings first: locations name them
    const Cursor line = NextLine(&at, end);
    if (!line.Starts("#")) MapsLine(line, visitor);
  }
  HeapTextVariance variance;
  bool have_variance = false;  // a variance line for the next record
  for (at = body; at < end;) {
    const Cursor line = NextLine(&at, end);
    if (line.Starts("MAPPED_LIBRARIES:")) break;
    if (line.Starts("# heapkit: lifetime ")) Lifetime(line, visitor);
    if (line.Starts("# heapkit: variance ")) {
      have_variance = Variance(line, &variance);
    } else if (line.Starts("#")) {
      visitor->Comment(line.p, static_cast<size_t>(line.end - line.p));
    } else if (line.p < line.end) {
      Record(line, have_variance ? &variance : nullptr, visitor);
      have_variance = false;
    }
  }
  for (at = maps; at < end;) {
    const Cursor line = NextLine(&at, end);
    if (line.Starts("#")) visitor->Comment(line.p, static_cast<size_t>(line.end - line.p));
  }
  return true;
}

}  // namespace heapkit::prof
