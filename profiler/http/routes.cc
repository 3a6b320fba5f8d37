// The endpoints (http_server.h's Handle): Go's net/http/pprof paths and query parameters,
// godeltaprof's delta_heap, the heap-growth stacks, the live leak check, gperftools' remote
// server paths (/pprof/heap, /pprof/growth, /pprof/cmdline, /pprof/symbol) and /metrics.
// Runs on the server's thread only: the state below needs no lock.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/http/access_policy.h"
#include "profiler/http/gzip.h"
#include "profiler/http/heap_profile_proto.h"
#include "profiler/http/http_server.h"
#include "profiler/http/metrics_text.h"
#include "profiler/http/process_symbolizer.h"

namespace heapkit::prof::http {
namespace {

// delta_heap's previous profile (the legacy text); empty before the first call.
std::string& PreviousDeltaSample() {
  static std::string* previous = new std::string;
  return *previous;
}

// /debug/pprof/leaks for /metrics: the checks run and refused, and the last check's figures.
LeakMetrics g_leak_checks;

Response Text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

void AppendTo(void* ctx, const char* data, size_t n) {
  static_cast<std::string*>(ctx)->append(data, n);
}

std::string HeapSample(const ServerHooks& hooks) {
  std::string text;
  hooks.heap_sample(&AppendTo, &text);
  return text;
}

std::string GrowthSample(const ServerHooks& hooks) {
  std::string text;
  if (hooks.growth_stacks != nullptr) hooks.growth_stacks(&AppendTo, &text);
  return text;
}

int64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Printable, bounded copy of a client-chosen name for an error line.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

Response Encode(const ServerHooks& hooks, const std::string& sample, const std::string& baseline,
                HeapView view, int64_t time_nanos, int64_t duration_nanos,
                DeltaMode delta = DeltaMode::kAll);

// Go's parameters: debug=0|1, gc (ignored), seconds=N where allowed. false with the 400 in *bad.
bool ParseQuery(std::string_view query, bool allow_seconds, bool* text, int* seconds,
                Response* bad) {
  *text = false;
  *seconds = 0;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    if (name == "debug") {
      if (value != "0" && value != "1") {
        *bad = Text(400, "debug must be 0 or 1\n");
        return false;
      }
      *text = value == "1";
    } else if (name == "seconds" && allow_seconds) {
      const std::string digits(value);
      char* end = nullptr;
      const long n = strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || n < 1 || n > kMaxDelaySeconds) {
        *bad = Text(
            400, "seconds must be an integer from 1 to " + std::to_string(kMaxDelaySeconds) + "\n");
        return false;
      }
      *seconds = static_cast<int>(n);
    } else if (name == "gc") {
      // Go runs a collection first; there is nothing to collect here.
    } else {
      *bad = Text(400, "unknown parameter " + Printable(name) + "\n");
      return false;
    }
  }
  return true;
}

Response HeapEndpoint(HeapView view, std::string_view query, const ServerHooks& hooks) {
  bool text = false;
  int seconds = 0;
  Response bad;
  if (!ParseQuery(query, true, &text, &seconds, &bad)) return bad;
  if (text && seconds > 0) return Text(400, "seconds and debug=1 cannot be combined\n");
  const std::string sample = HeapSample(hooks);
  if (sample.empty()) return Text(503, "heap sampling is off\n");
  if (text) return Text(200, sample);
  if (seconds > 0) {
    // Go's delta: the profile N s from now minus this one, dated now, lasting N s.
    const int64_t start = NowNanos();
    Response r;
    r.delay_ms = seconds * 1000;
    r.later = [sample, start, seconds, view, hooks] {
      return Encode(hooks, HeapSample(hooks), sample, view, start,
                    static_cast<int64_t>(seconds) * 1000000000);
    };
    return r;
  }
  return Encode(hooks, sample, "", view, NowNanos(), 0);
}

const char* FileName(HeapView view) {
  switch (view) {
    case HeapView::kHeap: return "heap";
    case HeapView::kAllocs: return "allocs";
    case HeapView::kDeltaHeap: return "delta_heap";
    case HeapView::kLeaks: return "leaks";
    case HeapView::kGrowth: return "growth";
  }
  return "profile";
}

Response Encode(const ServerHooks& hooks, const std::string& sample, const std::string& baseline,
                HeapView view, int64_t time_nanos, int64_t duration_nanos, DeltaMode delta) {
  std::string proto, error;
  HeapTotals totals;
  if (!HeapProfileToProto(hooks, sample, baseline, view, time_nanos, duration_nanos, &proto,
                          &totals, &error, delta)) {
    return Text(500, error + "\n");
  }
  Response r;
  if (!Gzip(proto, &r.body)) return Text(500, "cannot compress the profile\n");
  r.content_type = "application/octet-stream";
  r.extra_headers =
      std::string("Content-Disposition: attachment; filename=\"") + FileName(view) + "\"\r\n";
  return r;
}

// godeltaprof's delta_heap: alloc_* since the previous call (since start on the first),
// inuse_* absolute; dated now, duration 0. debug=1: the legacy text as it is now.
Response DeltaHeap(std::string_view query, const ServerHooks& hooks) {
  bool text = false;
  int seconds = 0;
  Response bad;
  if (!ParseQuery(query, false, &text, &seconds, &bad)) return bad;
  std::string sample = HeapSample(hooks);
  if (sample.empty()) return Text(503, "heap sampling is off\n");
  if (text) return Text(200, sample);
  Response r = Encode(hooks, sample, PreviousDeltaSample(), HeapView::kDeltaHeap, NowNanos(), 0,
                      DeltaMode::kAllocOnly);
  if (r.status == 200) PreviousDeltaSample() = std::move(sample);
  return r;
}

// GetHeapGrowthStacks: per stack, the number of times the page heap grew and the bytes it
// took from the OS (as inuse_objects/inuse_space and alloc_*, exact counts).
Response Growth(std::string_view query, const ServerHooks& hooks) {
  bool text = false;
  int seconds = 0;
  Response bad;
  if (!ParseQuery(query, false, &text, &seconds, &bad)) return bad;
  const std::string sample = GrowthSample(hooks);
  if (sample.empty()) return Text(503, "no heap-growth stacks in this runtime\n");
  if (text) return Text(200, sample);
  return Encode(hooks, sample, "", HeapView::kGrowth, NowNanos(), 0);
}

// "Retry-After: N" (whole seconds, at least 1: HTTP has no finer unit).
std::string RetryAfter(double seconds) {
  const long whole = static_cast<long>(seconds);
  return "Retry-After: " + std::to_string(whole < seconds || whole < 1 ? whole + 1 : whole) +
         "\r\n";
}

// "2026-12-01T22:50:01Z" for a CLOCK_REALTIME time.
std::string UtcTime(int64_t unix_nanos) {
  const time_t seconds = static_cast<time_t>(unix_nanos / 1000000000);
  tm utc;
  char text[32];
  if (gmtime_r(&seconds, &utc) == nullptr || strftime(text, sizeof text, "%FT%TZ", &utc) == 0)
    return "?";
  return text;
}

// The answer to a leak check request: a refusal, or the check's profile (answer kChecked).
Response LeakAnswer(const LeakCheckAnswer& answer, const ServerHooks& hooks,
                    const std::string& sample, bool text, int64_t start) {
  switch (answer.status) {
    case LeakCheckAnswer::kOff:
      return Text(503, "the leak checker is off: run the program with HEAPCHECK set\n");
    case LeakCheckAnswer::kFailed:
    case LeakCheckAnswer::kPending:
      return Text(500, "the leak check could not run (see the program's stderr)\n");
    case LeakCheckAnswer::kBusy: {
      g_leak_checks.refused_busy += 1;
      Response r = Text(503, "another leak check is running in the program; retry later\n");
      r.extra_headers = RetryAfter(answer.retry_after_seconds);
      return r;
    }
    case LeakCheckAnswer::kTooSoon: {
      g_leak_checks.refused_too_soon += 1;
      char line[320];
      snprintf(line, sizeof line,
               "too soon after the last leak check (ended %s, %.3f s, threads stopped %.3f s, "
               "%llu bytes leaked in %llu objects); the next may start in %.3f s\n",
               UtcTime(answer.ended_unix_nanos).c_str(), answer.seconds, answer.seconds_stopped,
               static_cast<unsigned long long>(answer.bytes),
               static_cast<unsigned long long>(answer.objects), answer.retry_after_seconds);
      Response r = Text(429, line);
      r.extra_headers = RetryAfter(answer.retry_after_seconds);
      return r;
    }
    case LeakCheckAnswer::kChecked: break;
  }
  g_leak_checks.checks += 1;
  g_leak_checks.bytes = answer.bytes;
  g_leak_checks.objects = answer.objects;
  g_leak_checks.seconds = static_cast<double>(NowNanos() - start) / 1e9;
  g_leak_checks.pause_seconds = answer.seconds_stopped;
  if (text) return Text(200, sample);
  return Encode(hooks, sample, "", HeapView::kLeaks, start, 0);
}

// A whole-program leak check now, if the runtime admits it (server_hooks.h LeakCheckAnswer:
// one check at a time, spaced so that checks take a bounded share of the program's time); the
// unreachable objects by allocation stack. Refused: 503 (another check runs) or 429 (too soon
// after the last: its time and totals, not its profile), each with Retry-After. Admitted: the
// threads are stopped only for the fork of the check's copy; the answer waits (a pending
// response) for the copy's pipe while the server serves other clients.
Response Leaks(std::string_view query, const ServerHooks& hooks) {
  bool text = false;
  int seconds = 0;
  Response bad;
  if (!ParseQuery(query, false, &text, &seconds, &bad)) return bad;
  if (hooks.leak_check_begin == nullptr || hooks.leak_check_end == nullptr)
    return Text(404, "no leak checker in this runtime\n");
  LeakCheckAnswer begun;
  const int64_t start = NowNanos();
  const int wait_fd = hooks.leak_check_begin(&begun);
  if (begun.status != LeakCheckAnswer::kPending)
    return LeakAnswer(begun, hooks, std::string(), text, start);
  auto end = [hooks, text, start]() {
    std::string sample;
    LeakCheckAnswer answer;
    hooks.leak_check_end(&AppendTo, &sample, &answer);
    return LeakAnswer(answer, hooks, sample, text, start);
  };
  if (wait_fd < 0) return end();
  Response r;
  r.later = std::move(end);
  r.wait_fd = wait_fd;
  r.delay_ms = begun.wait_ms;
  return r;
}

// Go's answer: the arguments joined by NUL bytes (/proc/self/cmdline ends each with one);
// gperftools' (/pprof/cmdline): one argument per line, the program first.
Response Cmdline(char separator) {
  std::string text;
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096];
    ssize_t n;
    while (text.size() < (1 << 20) && (n = read(fd, buf, sizeof buf)) > 0) {
      text.append(buf, static_cast<size_t>(n));
    }
    close(fd);
  }
  if (!text.empty() && text.back() == '\0') text.pop_back();
  if (separator != '\0') {
    for (char& c : text) c = c == '\0' ? separator : c;
    text += separator;
  }
  return Text(200, text);
}

// gperftools' remote symbol lookup: GET says whether symbols are served ("num_symbols: 1");
// POST takes "0xaddr+0xaddr+..." and answers "0xaddr\tname" for each address it knows. One
// request reads the maps once and caches nothing (process_symbolizer.h); it stops after
// kSymbolCpuBudgetNs of the server thread's CPU time, answering the addresses looked up so far
// and saying so in X-Heapkit-Symbols-Truncated (pprof reads an address left out as unknown).
constexpr size_t kMaxSymbolAddresses = 16384;
constexpr int64_t kSymbolCpuBudgetNs = 250 * 1000 * 1000;

Response Symbol(const Request& request) {
  if (request.method == "GET") return Text(200, "num_symbols: 1\n");
  std::vector<uint64_t> addresses;
  std::string_view body = request.body;
  while (!body.empty()) {
    const size_t plus = body.find('+');
    std::string_view word = body.substr(0, plus);
    body.remove_prefix(plus == std::string_view::npos ? body.size() : plus + 1);
    while (!word.empty() && (word.back() == '\n' || word.back() == '\r')) word.remove_suffix(1);
    if (word.empty()) continue;
    const std::string digits(word);
    char* end = nullptr;
    const unsigned long long address = strtoull(digits.c_str(), &end, 16);
    if (*end != '\0' || digits.size() > 18) {
      return Text(400, "not a hex address: " + Printable(word) + "\n");
    }
    if (addresses.size() == kMaxSymbolAddresses) {
      return Text(400, "more than " + std::to_string(kMaxSymbolAddresses) + " addresses\n");
    }
    addresses.push_back(address);
  }
  bool complete = true;
  const std::vector<std::string> names = FunctionsAt(addresses, kSymbolCpuBudgetNs, &complete);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    char hex[24];
    snprintf(hex, sizeof hex, "0x%016llx\t", static_cast<unsigned long long>(addresses[i]));
    out += hex;
    out += names[i];
    out += '\n';
  }
  Response r = Text(200, out);
  if (!complete) {
    r.extra_headers = "X-Heapkit-Symbols-Truncated: " + std::to_string(names.size()) + " of " +
                      std::to_string(addresses.size()) + " addresses looked up\r\n";
  }
  return r;
}

// gperftools' /pprof/heap and /pprof/growth: the legacy text, as GetHeapSample and
// GetHeapGrowthStacks write it.
Response LegacyText(const std::string& sample, const char* missing) {
  if (sample.empty()) return Text(503, std::string(missing) + "\n");
  return Text(200, sample);
}

Response Index() {
  Response r;
  r.content_type = "text/html; charset=utf-8";
  r.body =
      "<html><head><title>/debug/pprof/</title></head><body>\n"
      "<p>heapkit: live heap profiles of this process</p>\n<ul>\n"
      "<li><a href=\"heap\">heap</a> (in use; <a href=\"heap?debug=1\">text</a>)</li>\n"
      "<li><a href=\"allocs\">allocs</a> (allocated since start; "
      "<a href=\"allocs?debug=1\">text</a>)</li>\n"
      "<li><a href=\"delta_heap\">delta_heap</a> (allocated since the previous delta_heap, "
      "in use now)</li>\n"
      "<li><a href=\"growth\">growth</a> (stacks that grew the heap; "
      "<a href=\"growth?debug=1\">text</a>)</li>\n"
      "<li><a href=\"leaks\">leaks</a> (a leak check now, with HEAPCHECK; "
      "<a href=\"leaks?debug=1\">text</a>)</li>\n"
      "<li><a href=\"cmdline\">cmdline</a></li>\n"
      "<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n</ul></body></html>\n";
  return r;
}

}  // namespace

size_t EndpointHeapBytes() {
  const size_t baseline = PreviousDeltaSample().capacity();  // 15: inline, no heap block
  return CachedBytes() + (baseline > 15 ? baseline + 1 : 0);
}

Response Handle(const Request& request, const ServerHooks& hooks) {
  const std::string& target = request.target;
  const size_t question = target.find('?');
  const std::string_view path = std::string_view(target).substr(0, question);
  const std::string_view query =
      question == std::string::npos ? "" : std::string_view(target).substr(question + 1);
  // Who may ask, and from where (access_policy.h), before any route. The endpoints that act:
  // a leak check stops the program's threads, delta_heap moves its baseline.
  const bool side_effect = path == "/debug/pprof/leaks" || path == "/debug/pprof/delta_heap";
  Response refusal;
  if (request.admission == nullptr) return Text(403, "heapkit: refused: no access rule\n");
  if (request.admission->Refuses(request, side_effect, &refusal)) return refusal;
  // Go's net/http/pprof serves gperftools' symbol lookup as /debug/pprof/symbol: go pprof posts
  // there the addresses of mappings that a profile leaves unsymbolized.
  const bool symbol = path == "/pprof/symbol" || path == "/debug/pprof/symbol";
  if (request.method != "GET" && !(request.method == "POST" && symbol)) {
    Response r = Text(405, symbol ? "only GET and POST are served\n" : "only GET is served\n");
    r.extra_headers = symbol ? "Allow: GET, POST\r\n" : "Allow: GET\r\n";
    return r;
  }
  if (path == "/debug/pprof/heap") return HeapEndpoint(HeapView::kHeap, query, hooks);
  if (path == "/debug/pprof/allocs") return HeapEndpoint(HeapView::kAllocs, query, hooks);
  if (path == "/debug/pprof/delta_heap") return DeltaHeap(query, hooks);
  if (path == "/debug/pprof/growth") return Growth(query, hooks);
  if (path == "/debug/pprof/leaks") return Leaks(query, hooks);
  const bool gperftools_path = path.substr(0, 7) == "/pprof/";
  if (!query.empty() && (path == "/debug/pprof/" || path == "/debug/pprof/cmdline" ||
                         path == "/metrics" || gperftools_path)) {
    return Text(400, std::string(path) + " takes no parameters\n");
  }
  if (path == "/debug/pprof/") return Index();
  if (path == "/debug/pprof/cmdline") return Cmdline('\0');
  if (path == "/pprof/cmdline") return Cmdline('\n');
  if (path == "/pprof/heap") return LegacyText(HeapSample(hooks), "heap sampling is off");
  if (path == "/pprof/growth") {
    return LegacyText(GrowthSample(hooks), "no heap-growth stacks in this runtime");
  }
  if (symbol) return Symbol(request);
  if (path == "/metrics") {
    // The figures never count a symbolizer a profile scrape left: it is dropped first.
    DropSymbolizer(hooks.return_memory);
    const std::string sample = HeapSample(hooks);
    HeapTotals totals;
    std::string error;
    const bool sampled = !sample.empty() && HeapProfileTotals(hooks, sample, &totals, &error);
    std::string figures;
    if (hooks.memory_figures != nullptr) hooks.memory_figures(&AppendTo, &figures);
    MetricsInput input;
    input.property = hooks.numeric_property;
    input.totals = sampled ? &totals : nullptr;
    input.memory_figures = figures;
    input.endpoint_heap_bytes = EndpointHeapBytes();
    Response r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = MetricsText(input);
    if (g_leak_checks.checks + g_leak_checks.refused_busy + g_leak_checks.refused_too_soon > 0)
      r.body += LeakMetricsText(g_leak_checks);
    r.body += RefusalMetricsText();
    return r;
  }
  return Text(404, "unknown path " + Printable(path) + "\n");
}

}  // namespace heapkit::prof::http
