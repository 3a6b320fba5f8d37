// The endpoints (http_server.h's Handle): Go's net/http/pprof paths and query parameters.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "profiler/http/gzip.h"
#include "profiler/http/heap_profile_proto.h"
#include "profiler/http/http_server.h"
#include "profiler/http/metrics_text.h"

namespace heapkit::prof::http {
namespace {

Response Text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string HeapSample(const ServerHooks& hooks) {
  std::string text;
  hooks.heap_sample(
      [](void* ctx, const char* data, size_t n) { static_cast<std::string*>(ctx)->append(data, n); },
      &text);
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

Response Encode(const std::string& sample, const std::string& baseline, HeapView view,
                int64_t time_nanos, int64_t duration_nanos);

Response HeapEndpoint(HeapView view, std::string_view query, const ServerHooks& hooks) {
  bool text = false;
  int seconds = 0;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    if (name == "debug") {
      if (value != "0" && value != "1") return Text(400, "debug must be 0 or 1\n");
      text = value == "1";
    } else if (name == "seconds") {
      const std::string digits(value);
      char* end = nullptr;
      const long n = strtol(digits.c_str(), &end, 10);
      if (digits.empty() || *end != '\0' || n < 1 || n > kMaxDelaySeconds) {
        return Text(400, "seconds must be an integer from 1 to " +
                             std::to_string(kMaxDelaySeconds) + "\n");
      }
      seconds = static_cast<int>(n);
    } else if (name == "gc") {
      // Go runs a collection first; there is nothing to collect here.
    } else {
      return Text(400, "unknown parameter " + Printable(name) + "\n");
    }
  }
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
      return Encode(HeapSample(hooks), sample, view, start,
                    static_cast<int64_t>(seconds) * 1000000000);
    };
    return r;
  }
  return Encode(sample, "", view, NowNanos(), 0);
}

Response Encode(const std::string& sample, const std::string& baseline, HeapView view,
                int64_t time_nanos, int64_t duration_nanos) {
  std::string proto, error;
  HeapTotals totals;
  if (!HeapProfileToProto(sample, baseline, view, time_nanos, duration_nanos, &proto, &totals,
                          &error)) {
    return Text(500, error + "\n");
  }
  Response r;
  if (!Gzip(proto, &r.body)) return Text(500, "cannot compress the profile\n");
  r.content_type = "application/octet-stream";
  r.extra_headers = std::string("Content-Disposition: attachment; filename=\"") +
                    (view == HeapView::kHeap ? "heap" : "allocs") + "\"\r\n";
  return r;
}

// Go's answer: the arguments joined by NUL bytes (/proc/self/cmdline ends each with one).
Response Cmdline() {
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
  return Text(200, text);
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
      "<li><a href=\"cmdline\">cmdline</a></li>\n"
      "<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n</ul></body></html>\n";
  return r;
}

}  // namespace

Response Handle(const std::string& target, const ServerHooks& hooks) {
  const size_t question = target.find('?');
  const std::string_view path = std::string_view(target).substr(0, question);
  const std::string_view query =
      question == std::string::npos ? "" : std::string_view(target).substr(question + 1);
  if (path == "/debug/pprof/heap") return HeapEndpoint(HeapView::kHeap, query, hooks);
  if (path == "/debug/pprof/allocs") return HeapEndpoint(HeapView::kAllocs, query, hooks);
  if (path == "/debug/pprof/" || path == "/debug/pprof/cmdline") {
    if (!query.empty()) return Text(400, std::string(path) + " takes no parameters\n");
    return path == "/debug/pprof/" ? Index() : Cmdline();
  }
  if (path == "/metrics") {
    if (!query.empty()) return Text(400, "/metrics takes no parameters\n");
    const std::string sample = HeapSample(hooks);
    HeapTotals totals;
    std::string error;
    const bool sampled = !sample.empty() && HeapProfileTotals(sample, &totals, &error);
    Response r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = MetricsText(hooks.numeric_property, sampled ? &totals : nullptr);
    return r;
  }
  return Text(404, "unknown path " + Printable(path) + "\n");
}

}  // namespace heapkit::prof::http
