#include "pprof-tool/parse/legacy_parser.h"

#include "alloc/internal/hex_digit.h"
#include "alloc/internal/safe_file.h"
#include "pprof-tool/model/memory_figures.h"
#include "pprof-tool/model/stack_residency.h"
#include "profiler/symbolize/maps_line.h"
#include "alloc/sample_weight.h"  // header-only: the runtime's libraries are not linked

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit::pprof {
namespace {

// The factor by which a line's count and bytes are multiplied (alloc/sample_weight.h: the
// writer's own formula, 1 / (1 - exp(-(bytes/count) / rate))); 1 when rate <= 1 or a value is 0.
double LineScale(double count, double bytes, double rate) {
  if (count == 0 || bytes == 0) return 1;
  return alloc::SampleScale(bytes / count, rate);
}

// Largest count we accept: keeps sums exact in a double and far from int64 overflow.
constexpr int64_t kMaxCount = int64_t{1} << 53;

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(std::string_view w) {
    SkipSpace();
    if (s_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  // Signed decimal. Returns 0 ok, 1 not a number, 2 out of range.
  int Int(int64_t* out) {
    SkipSpace();
    bool neg = false;
    size_t p = pos_;
    if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) {
      neg = s_[p] == '-';
      ++p;
    }
    if (p >= s_.size() || s_[p] < '0' || s_[p] > '9') return 1;
    int64_t v = 0;
    while (p < s_.size() && s_[p] >= '0' && s_[p] <= '9') {
      v = v * 10 + (s_[p] - '0');
      if (v > kMaxCount) return 2;
      ++p;
    }
    pos_ = p;
    *out = neg ? -v : v;
    return 0;
  }
  // Hex address, "0x" optional. 0 ok, 1 not hex, 2 too long.
  int Hex(uint64_t* out) {
    SkipSpace();
    size_t p = pos_;
    if (p + 1 < s_.size() && s_[p] == '0' && (s_[p + 1] == 'x' || s_[p + 1] == 'X')) p += 2;
    uint64_t v = 0;
    int digits = 0;
    while (p < s_.size()) {
      char c = s_[p];
      const int d = internal::HexDigitValue(c);
      if (d < 0) break;
      if (++digits > 16) return 2;
      v = (v << 4) | uint64_t(d);
      ++p;
    }
    if (digits == 0) return 1;
    if (p < s_.size() && s_[p] != ' ' && s_[p] != '\t') return 1;
    pos_ = p;
    *out = v;
    return 0;
  }
  std::string_view Rest() const { return s_.substr(std::min(pos_, s_.size())); }
  std::string_view Token() {
    SkipSpace();
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ' ' && s_[pos_] != '\t') ++pos_;
    return s_.substr(b, pos_ - b);
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

bool IsBinary(std::string_view line) {
  for (unsigned char c : line) {
    if (c == 0 || (c < 0x20 && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v')) {
      return true;
    }
  }
  return false;
}

bool IsMapsTrigger(std::string_view line) {
  return line.find("MAPPED_LIBRARIES:") != std::string_view::npos ||
         line.find("--- Memory map: ---") != std::string_view::npos;
}

// "# heapkit: dump time: <unix seconds>.<ms> pid <pid>" (profiler/format/legacy_writer.h): the
// first such line fills dump_time and dump_pid; a line that does not have that form is a comment.
void ParseDumpTime(std::string_view t, Profile* profile) {
  constexpr std::string_view kTime = "# heapkit: dump time: ";
  if (t.substr(0, kTime.size()) != kTime || profile->dump_time != 0) return;
  std::string rest(t.substr(kTime.size(), 64));
  double seconds = 0;
  long long pid = 0;
  int used = 0;
  if (sscanf(rest.c_str(), "%lf pid %lld%n", &seconds, &pid, &used) == 2 &&
      size_t(used) == rest.size() && seconds > 0 && seconds < 1e11 && pid > 0) {
    profile->dump_time = seconds;
    profile->dump_pid = pid;
  }
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  size_t n = std::min<size_t>(s.size(), 60);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = s[i];
    out += (c < 0x20 || c >= 0x7f) ? '?' : char(c);
  }
  if (s.size() > n) out += "...";
  return out + "'";
}

// Line reader over text in memory or a file descriptor read in chunks (memory stays bounded
// by the longest line, whatever the file size: a 1 GB sparse file is rejected after 1 MiB).
// A line returned by Next() stays valid until the next call. Next() returns false at the end
// of the input and on failure (error() is then non-empty: unreadable, or a line > kMaxLine).
class Lines {
 public:
  static constexpr size_t kMaxLine = size_t{1} << 20;

  explicit Lines(std::string_view text) : text_(text), eof_(true) {}
  explicit Lines(int fd) : fd_(fd) {}

  bool Next(std::string_view* line) {
    if (!error_.empty()) return false;
    if (pos_ > text_.size()) pos_ = text_.size();  // after an unterminated last line
    size_t e;
    for (;;) {
      e = text_.find('\n', pos_);
      if (e != std::string_view::npos && e - pos_ <= kMaxLine) break;
      if (text_.size() - pos_ > kMaxLine) {
        std::string_view head = text_.substr(pos_, kMaxLine);
        ++number_;
        error_ = IsBinary(head) ? "expected text, found binary data"
                                : "expected lines shorter than 1 MiB, found a longer line";
        return false;
      }
      if (eof_) break;
      if (!Fill()) return false;
    }
    if (pos_ >= text_.size()) return false;
    incomplete_ = e == std::string_view::npos;
    if (incomplete_) e = text_.size();
    *line = text_.substr(pos_, e - pos_);
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    pos_ = e + 1;
    ++number_;
    return true;
  }
  int number() const { return number_; }
  // The line last returned ended at the end of the input without a '\n' (truncated file?).
  bool incomplete() const { return incomplete_; }
  const std::string& error() const { return error_; }

 private:
  // Appends the next chunk of the file to buffer_ (dropping consumed lines). False on error.
  bool Fill() {
    buffer_.erase(0, pos_);
    pos_ = 0;
    const size_t old = buffer_.size();
    buffer_.resize(old + kChunk);
    ssize_t r;
    do {
      r = read(fd_, buffer_.data() + old, kChunk);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      error_ = std::string("cannot read: ") + strerror(errno);
      buffer_.resize(old);
      return false;
    }
    buffer_.resize(old + size_t(r));
    eof_ = r == 0;
    text_ = buffer_;
    return true;
  }

  static constexpr size_t kChunk = size_t{1} << 18;
  std::string_view text_;
  std::string buffer_;
  int fd_ = -1;
  bool eof_ = false;
  size_t pos_ = 0;
  int number_ = 0;
  bool incomplete_ = false;
  std::string error_;
};

// The last line of heapkit's HEAPPROFILE dumps (profiler/format/legacy_writer.h).
constexpr std::string_view kEndOfDump = "# heapkit: end of dump";

struct Parser {
  const std::string& file;
  Profile* profile;
  ParseError* error;
  Lines* lines = nullptr;
  bool saw_maps = false;  // a MAPPED_LIBRARIES / "--- Memory map: ---" section began
  bool saw_end = false;   // kEndOfDump was read

  bool Fail(int line, std::string what) {
    error->file = file;
    error->line = line;
    error->expected = std::move(what);
    if (lines != nullptr && line == lines->number() && lines->incomplete()) {
      error->expected += " (the file ends in the middle of this line: truncated?)";
    }
    return false;
  }

  // After Next() returned false: false (with the reader's error) if reading failed.
  bool ReaderOk() {
    if (lines->error().empty()) return true;
    return Fail(lines->number(), lines->error());
  }

  // The last line of a file that does not end in '\n' may be cut short: it is not trusted.
  void WarnIncomplete(const char* what) {
    profile->warnings.push_back(file + ":" + std::to_string(lines->number()) +
                                ": the file ends in the middle of this " + what +
                                " (truncated?); line ignored");
  }

  // "<n>: <b>" pair.
  int Pair(Cursor& c, int64_t* n, int64_t* b) {
    int r = c.Int(n);
    if (r) return r;
    if (!c.Consume(':')) return 1;
    return c.Int(b);
  }

  bool ParseHeader(std::string_view line, int number) {
    static const char kHeaderShape[] =
        "expected a heap profile header 'heap profile: <objects>: <bytes> [ <objects>: <bytes>] "
        "@ heapprofile|heap_v2/<rate>|heap/<rate>|growth'";
    if (IsBinary(line)) return Fail(number, std::string(kHeaderShape) + ", found binary data");
    Cursor c(line);
    if (!c.ConsumeWord("heap profile:")) {
      if (line.find("profile") != std::string_view::npos &&
          line.find("heap") == std::string_view::npos) {
        return Fail(number,
                    std::string(kHeaderShape) + ", found " + Quote(line) + " (not a heap profile)");
      }
      return Fail(number, std::string(kHeaderShape) + ", found " + Quote(line));
    }
    int64_t n = 0, b = 0, an = 0, ab = 0;
    int r = Pair(c, &n, &b);
    if (r == 2) return Fail(number, "expected header numbers below 2^53, found " + Quote(line));
    if (r) return Fail(number, std::string(kHeaderShape) + ", found " + Quote(line));
    if (c.Consume('[')) {
      r = Pair(c, &an, &ab);
      if (r == 2) return Fail(number, "expected header numbers below 2^53, found " + Quote(line));
      if (r || !c.Consume(']'))
        return Fail(number, std::string(kHeaderShape) + ", found " + Quote(line));
      profile->has_alloc_columns = true;
    }
    if (!c.Consume('@')) return Fail(number, std::string(kHeaderShape) + ", found " + Quote(line));
    std::string_view type = c.Token();
    std::string_view rate_text;
    size_t slash = type.find('/');
    if (slash != std::string_view::npos) {
      rate_text = type.substr(slash + 1);
      type = type.substr(0, slash);
    }
    uint64_t rate = 0;
    if (!rate_text.empty()) {
      Cursor rc(rate_text);
      int64_t v = 0;
      if (rc.Int(&v) != 0 || v < 0 || !rc.Rest().empty()) {
        return Fail(number, "expected a sampling rate after '" + std::string(type) + "/', found " +
                                Quote(rate_text));
      }
      rate = uint64_t(v);
    }
    if (type == "heapprofile") {
      profile->kind = ProfileKind::kHeapProfile;
    } else if (type == "heap_v2" || type == "heapz_v2") {
      profile->kind = ProfileKind::kHeapV2;
      profile->sample_period = rate;
    } else if (type == "heap" || type == "heapz") {
      profile->kind = ProfileKind::kHeapV1;
      profile->sample_period = rate;
    } else if (type == "growth" || type == "growthz") {
      profile->kind = ProfileKind::kGrowth;
    } else {
      return Fail(number,
                  "expected profile type heapprofile, heap_v2/<rate>, heap/<rate> or "
                  "growth after '@', found " +
                      Quote(type));
    }
    if (!Trim(c.Rest()).empty()) {
      return Fail(number, "expected end of header line after the profile type, found " +
                              Quote(Trim(c.Rest())));
    }
    profile->header_totals = {double(n), double(b), double(an), double(ab)};
    return true;
  }

  void Unsample(RawSample* s) {
    s->value = s->raw;
    double rate = double(profile->sample_period);
    if (profile->kind == ProfileKind::kHeapV1) rate /= 2;  // pprof's reading of "heap/<rate>"
    if (profile->kind != ProfileKind::kHeapV2 && profile->kind != ProfileKind::kHeapV1) return;
    double si = LineScale(s->raw.inuse_objects, s->raw.inuse_bytes, rate);
    s->value.inuse_objects *= si;
    s->value.inuse_bytes *= si;
    double sa = LineScale(s->raw.alloc_objects, s->raw.alloc_bytes, rate);
    s->value.alloc_objects *= sa;
    s->value.alloc_bytes *= sa;
  }

  static constexpr char kShape[] =
      "expected a sample line '<objects>: <bytes> [ <objects>: <bytes>] @ <address>...'";

  // A sample line. Binary data never parses (a control byte is no digit, space, '@' or hex
  // digit), so the look for it is made only for a line that failed: it names the cause.
  bool ParseSample(std::string_view line, int number) {
    if (ParseSampleFields(line, number)) return true;
    if (IsBinary(line)) return Fail(number, std::string(kShape) + ", found binary data");
    return false;
  }

  bool ParseSampleFields(std::string_view line, int number) {
    Cursor c(line);
    int64_t n = 0, b = 0, an = 0, ab = 0;
    int r = Pair(c, &n, &b);
    if (r == 2) return Fail(number, "expected counts below 2^53, found " + Quote(line));
    if (r) return Fail(number, std::string(kShape) + ", found " + Quote(line));
    bool alloc = false;
    if (c.Consume('[')) {
      r = Pair(c, &an, &ab);
      if (r == 2) return Fail(number, "expected counts below 2^53, found " + Quote(line));
      if (r || !c.Consume(']')) return Fail(number, std::string(kShape) + ", found " + Quote(line));
      alloc = true;
    }
    if (!c.Consume('@')) {
      return Fail(number, std::string(kShape) + ", found " + Quote(line) + " (no '@')");
    }
    if ((n == 0 && b != 0) || (an == 0 && ab != 0)) {
      return Fail(number, "expected 0 bytes where the object count is 0, found " + Quote(line));
    }
    // Negative pairs are a --base difference written by --raw; a mixed sign is nonsense.
    auto mixed = [](int64_t count, int64_t bytes) {
      return (count < 0 && bytes > 0) || (count > 0 && bytes < 0);
    };
    if (mixed(n, b) || mixed(an, ab)) {
      return Fail(number,
                  "expected an object count and bytes of the same sign, found " + Quote(line));
    }
    RawSample s;
    for (;;) {
      c.SkipSpace();
      if (c.AtEnd()) break;
      uint64_t pc = 0;
      r = c.Hex(&pc);
      if (r == 2)
        return Fail(number,
                    "expected addresses of at most 16 hex digits, found " + Quote(c.Rest()));
      if (r) return Fail(number, "expected a hex address, found " + Quote(c.Rest()));
      s.pcs.push_back(pc);
    }
    s.raw = {double(n), double(b), alloc ? double(an) : double(n), alloc ? double(ab) : double(b)};
    if (alloc) profile->has_alloc_columns = true;
    Unsample(&s);
    if (have_variance) {  // the `# heapkit: variance` line before it
      s.variance = pending_variance;
      s.has_variance = true;
      have_variance = false;
      ++recorded_variances;
    } else {
      ++derived_variances;
    }
    profile->samples.push_back(std::move(s));
    return true;
  }

  // jemalloc's prof dump: "heap_v2/<rate>" alone on the first line, then per stack an
  // "@ <pc>..." line followed by "t*: <n>: <b> [<n>: <b>]" (all threads) and "t<id>: ..."
  // (per thread, ignored); a "t*:" line before the first stack holds the totals. Each stack
  // becomes the legacy sample line it stands for, so the one heap_v2 un-sampling rule applies
  // (jemalloc writes its counts for exactly that rule, jeprof's).
  bool jemalloc = false;
  std::string jemalloc_stack = {};  // pcs of the last "@" line; "" once its "t*:" line was read
  bool ParseJemallocLine(std::string_view line, int number) {
    if (line[0] == '@') {
      jemalloc_stack = std::string(Trim(line.substr(1)));
      if (jemalloc_stack.empty()) jemalloc_stack = " ";
      return true;
    }
    size_t colon = line.find(':');
    std::string_view thread = line.substr(0, colon);
    if (line[0] != 't' || colon == std::string_view::npos || thread.size() < 2 ||
        (thread != "t*" && thread.find_first_not_of("0123456789", 1) != std::string_view::npos)) {
      return Fail(number,
                  "expected a jemalloc line '@ <address>...' or 't<thread>: <objects>: "
                  "<bytes> [<objects>: <bytes>]', found " +
                      Quote(line));
    }
    if (thread != "t*") return true;
    std::string counts(Trim(line.substr(colon + 1)));
    if (profile->samples.empty() && jemalloc_stack.empty()) {
      Cursor c(counts);
      int64_t n = 0, b = 0, an = 0, ab = 0;
      if (Pair(c, &n, &b) == 0 && c.Consume('[') && Pair(c, &an, &ab) == 0) {
        profile->header_totals = {double(n), double(b), double(an), double(ab)};
      }
      return true;
    }
    if (jemalloc_stack.empty()) {
      return Fail(number,
                  "expected an '@ <address>...' line before this 't*:' line, found " + Quote(line));
    }
    std::string sample = counts + " @ " + jemalloc_stack;
    jemalloc_stack.clear();
    return ParseSample(sample, number);
  }

  bool ParseMaps(Lines& lines) {
    saw_maps = true;
    std::string_view line;
    while (lines.Next(&line)) {
      Mapping m;
      if (lines.incomplete()) {
        WarnIncomplete("memory map line");
        break;
      }
      if (Trim(line) == kEndOfDump) saw_end = true;
      if (ParseMapsLine(line, &m)) {
        profile->maps_text.append(line.data(), line.size());
        profile->maps_text += '\n';
        profile->mappings.push_back(std::move(m));
      }
    }
    return ReaderOk();
  }

  // "--- symbol" section of --raw output. Ends at a line "---".
  bool ParseSymbols(Lines& lines) {
    std::string_view line;
    while (lines.Next(&line)) {
      std::string_view t = Trim(line);
      if (t == "---") return true;
      if (t.empty()) continue;
      if (t.substr(0, 7) == "binary=") {
        profile->binary = std::string(t.substr(7));
        continue;
      }
      Cursor c(t);
      uint64_t pc = 0;
      if (c.Hex(&pc) != 0)
        return Fail(
            lines.number(),
            "expected '0x<address> <name>[--<name>...]' in the symbol section, found " + Quote(t));
      std::string_view names = Trim(c.Rest());
      EmbeddedSymbol sym;
      sym.pc = pc;
      while (!names.empty()) {
        size_t sep = names.find("--");
        sym.frames.emplace_back(names.substr(0, sep));
        if (sep == std::string_view::npos) break;
        names.remove_prefix(sep + 2);
      }
      if (sym.frames.empty()) {
        char buf[24];
        snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(pc));
        sym.frames.push_back(buf);
      }
      profile->symbols.push_back(std::move(sym));
    }
    if (!ReaderOk()) return false;
    return Fail(lines.number() + 1, "expected '---' ending the symbol section, found end of file");
  }

  // Truncation at a line boundary leaves only complete lines; what is missing tells:
  //  - a heapkit dump (it has the profiler's "dump time" line) ends with kEndOfDump;
  //  - a file without a memory map whose records count fewer objects than its header does lost
  //    records (with a map, a header that differs is informational: a heap that changed between
  //    the writer's two passes, or a hand-edited file).
  bool CheckComplete() {
    // Fail() says "the file ends in the middle of this line: truncated?" after a cut line.
    const std::string truncated = lines->incomplete() ? "" : " (truncated?)";
    if (profile->dump_time != 0 && !saw_end) {
      return Fail(lines->number(), "expected the dump's last line '" + std::string(kEndOfDump) +
                                       "', found end of file" + truncated);
    }
    if (saw_maps || jemalloc) return true;
    SampleValues sum;
    for (const RawSample& r : profile->samples) {
      sum.inuse_objects += r.raw.inuse_objects;
      sum.alloc_objects += r.raw.alloc_objects;
    }
    const SampleValues& h = profile->header_totals;
    if (sum.inuse_objects < h.inuse_objects ||
        (profile->has_alloc_columns && sum.alloc_objects < h.alloc_objects)) {
      char counts[160];
      snprintf(counts, sizeof counts, "%.0f in-use and %.0f allocated objects, found %.0f and %.0f",
               h.inuse_objects, h.alloc_objects, sum.inuse_objects, sum.alloc_objects);
      return Fail(lines->number(), std::string("expected the header's ") + counts +
                                       " and no memory map" + truncated);
    }
    return true;
  }

  // "# heapkit: variance <inuse n> <inuse bytes> <alloc n> <alloc bytes>": the sampling
  // variances of the next sample line's estimates (profiler/format/legacy_writer.h). False for
  // other lines; a malformed one is dropped (its sample's variance is then derived).
  SampleValues pending_variance = {};
  bool have_variance = false;
  size_t recorded_variances = 0, derived_variances = 0;
  bool ParseVarianceLine(std::string_view t) {
    constexpr std::string_view kVariance = "# heapkit: variance ";
    if (t.substr(0, kVariance.size()) != kVariance) return false;
    const std::string fields(t.substr(kVariance.size()));
    double v[4];
    const char* p = fields.c_str();
    have_variance = true;
    for (double& x : v) {
      char* end = nullptr;
      x = strtod(p, &end);
      if (end == p || !(x >= 0) || !std::isfinite(x)) have_variance = false;
      p = end;
    }
    if (have_variance) pending_variance = {v[0], v[1], v[2], v[3]};
    return true;
  }

  bool Run(Lines& lines) {
    const bool ok = ParseAll(lines) && CheckComplete();
    profile->variance_recorded = recorded_variances > 0 && derived_variances == 0;
    return ok;
  }

  bool ParseAll(Lines& lines) {
    this->lines = &lines;
    std::string_view line;
    // Header: skip blank and comment lines.
    for (;;) {
      if (!lines.Next(&line)) {
        if (!ReaderOk()) return false;
        return Fail(lines.number() + 1,
                    "expected a heap profile header 'heap profile: ...', found end of file");
      }
      std::string_view t = Trim(line);
      if (t.empty() || t[0] == '#') continue;
      if (t == "--- symbol") {
        if (!ParseSymbols(lines)) return false;
        continue;
      }
      if (t.substr(0, 4) == "--- " && t != "--- Memory map: ---" && !profile->symbols.empty()) {
        continue;  // "--- heap" marker of --raw output
      }
      jemalloc = t.substr(0, 8) == "heap_v2/";
      if (!ParseHeader(jemalloc ? "heap profile: 0: 0 [0: 0] @ " + std::string(t) : std::string(t),
                       lines.number())) {
        return false;
      }
      if (lines.incomplete()) {
        return Fail(lines.number(), "expected a complete header line, found end of file");
      }
      break;
    }
    while (lines.Next(&line)) {
      std::string_view t = Trim(line);
      if (lines.incomplete() && (t.empty() || t[0] == '#' || IsMapsTrigger(t))) {
        WarnIncomplete("line");
        break;
      }
      if (!t.empty() && t[0] == '#') {
        if (!ParseVarianceLine(t)) ParseHeapkitComment(t, profile);
        continue;
      }
      if (t.empty()) continue;
      if (IsMapsTrigger(t)) return ParseMaps(lines);
      if (jemalloc) {
        if (lines.incomplete()) {
          WarnIncomplete("line");
          break;
        }
        if (!ParseJemallocLine(t, lines.number())) return false;
        continue;
      }
      if (!ParseSample(t, lines.number())) return false;
      if (lines.incomplete()) {
        profile->samples.pop_back();
        WarnIncomplete("sample line");
      }
    }
    return ReaderOk();
  }
};

}  // namespace

void ParseHeapkitComment(std::string_view t, Profile* profile) {
  constexpr std::string_view kReason = "# heapkit: dump reason: ";
  if (t.substr(0, kReason.size()) == kReason && profile->dump_reason.empty()) {
    profile->dump_reason = std::string(t.substr(kReason.size(), 256));  // escaped when shown
  }
  ParseDumpTime(t, profile);
  if (!ParseMemoryFigure(t, profile) && !ParseStackResidencyLine(t, profile))
    ParseObjectTimeLine(t, &profile->object_times);
}

std::string ParseError::Message() const {
  if (line == 0) return file + ": " + expected;
  return file + ":" + std::to_string(line) + ": " + expected;
}

bool ParseMapsLine(std::string_view line, Mapping* m) {
  MapsLine parsed;
  if (!heapkit::ParseMapsLine(line, &parsed)) return false;
  m->start = parsed.start;
  m->limit = parsed.limit;
  m->offset = parsed.offset;
  m->perms = std::string(parsed.perms);
  m->path = std::string(parsed.path);
  return true;
}

bool ParseProfileText(std::string_view text, const std::string& file_name, Profile* profile,
                      ParseError* error) {
  *profile = Profile();
  profile->file = file_name;
  Parser p{file_name, profile, error};
  Lines lines(text);
  const bool ok = p.Run(lines);
  ApplyStackResidency(profile);
  return ok;
}

bool ReadProfileFile(const std::string& path, Profile* profile, ParseError* error) {
  auto fail = [&](const std::string& what) {
    error->file = path;
    error->line = 0;
    error->expected = what;
    return false;
  };
  int err = 0;
  const int fd = internal::OpenRegularFile(path.c_str(), &err);
  if (fd < 0) {
    return fail(err == EINVAL ? std::string("expected a regular file")
                              : std::string("cannot open: ") + strerror(err));
  }
  // Streamed: memory holds the parsed profile and one chunk, never the whole file.
  *profile = Profile();
  profile->file = path;
  Parser p{path, profile, error};
  Lines lines(fd);
  bool ok = p.Run(lines);
  close(fd);
  ApplyStackResidency(profile);
  return ok;
}

}  // namespace heapkit::pprof
