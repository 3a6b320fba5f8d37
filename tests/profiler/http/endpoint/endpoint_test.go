// Checks a heapkit process's HTTP endpoint with go pprof's own profile package (Debian's
// golang-github-google-pprof-dev), as Parca and Pyroscope read it. run_http.py starts the
// program (http_workload.cc) and passes its address in HEAPKIT_TEST_URL and the program's
// build ID (readelf -n) in HEAPKIT_TEST_BUILD_ID.
package endpoint

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func get(t *testing.T, path string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get(os.Getenv("HEAPKIT_TEST_URL") + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

var hexBuildID = regexp.MustCompile(`^[0-9a-f]{16,}$`)

// Sum of a sample type's values over the samples whose stack holds `function`.
func valueThrough(p *profile.Profile, function string, index int) int64 {
	var sum int64
	for _, s := range p.Sample {
		found := false
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if strings.Contains(line.Function.Name, function) {
					found = true
				}
			}
		}
		if found {
			sum += s.Value[index]
		}
	}
	return sum
}

func near(got int64, want float64, tolerance float64) bool {
	return math.Abs(float64(got)-want) <= tolerance*want
}

// The rules every profile answer keeps (Go's layout, IDs, symbolization, build IDs).
// withVariance: a sampled profile that is not a delta, whose records carry their sampling
// variance as four more sample types (profiler/format/heap_sample_values.h).
func validProfile(t *testing.T, path string, defaultType string, period int64, withVariance bool) *profile.Profile {
	t.Helper()
	status, contentType, body := get(t, path)
	if status != 200 || contentType != "application/octet-stream" {
		t.Fatalf("%s: status %d, content type %q", path, status, contentType)
	}
	if !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		t.Fatalf("%s: not gzipped", path)
	}
	// ParseData refuses a string table whose first entry is not "" (profile.go postDecode).
	p, err := profile.ParseData(body)
	if err != nil {
		t.Fatalf("%s: ParseData: %v", path, err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("%s: CheckValid: %v", path, err)
	}
	want := []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}
	if withVariance {
		want = append(want, "alloc_objects_variance/count^2", "alloc_space_variance/bytes^2",
			"inuse_objects_variance/count^2", "inuse_space_variance/bytes^2")
	}
	if len(p.SampleType) != len(want) {
		t.Fatalf("%s: %d sample types", path, len(p.SampleType))
	}
	for i, st := range p.SampleType {
		if st.Type+"/"+st.Unit != want[i] {
			t.Errorf("%s: sample type %d is %s/%s, want %s", path, i, st.Type, st.Unit, want[i])
		}
	}
	if p.PeriodType == nil || p.PeriodType.Type != "space" || p.PeriodType.Unit != "bytes" || p.Period != period {
		t.Errorf("%s: period type %v period %d, want space/bytes %d", path, p.PeriodType, p.Period, period)
	}
	if p.DefaultSampleType != defaultType {
		t.Errorf("%s: default sample type %q, want %q", path, p.DefaultSampleType, defaultType)
	}
	if p.DurationNanos != 0 {
		t.Errorf("%s: duration_nanos %d, want 0", path, p.DurationNanos)
	}
	if age := time.Since(time.Unix(0, p.TimeNanos)); age < 0 || age > time.Minute {
		t.Errorf("%s: time_nanos %d is not now", path, p.TimeNanos)
	}
	// IDs: 1..n in order, as Go numbers them.
	for i, m := range p.Mapping {
		if m.ID != uint64(i+1) {
			t.Errorf("%s: mapping %d has ID %d", path, i, m.ID)
		}
		// All four marks or none: none where a frame of the mapping could not be named here.
		if m.HasFunctions != m.HasFilenames || m.HasFunctions != m.HasLineNumbers || m.HasFunctions != m.HasInlineFrames {
			t.Errorf("%s: mapping %s marked symbolized in part", path, m.File)
		}
		if m.BuildID != "" && !hexBuildID.MatchString(m.BuildID) {
			t.Errorf("%s: mapping %s build ID %q is not hex", path, m.File, m.BuildID)
		}
	}
	for i, l := range p.Location {
		if l.ID != uint64(i+1) {
			t.Errorf("%s: location %d has ID %d", path, i, l.ID)
		}
		// Named here, or left as an address for a reader with the binary, in a mapping that
		// says so (Go's pprof symbolizes only such mappings).
		if len(l.Line) == 0 && (l.Mapping == nil || l.Mapping.HasFunctions) {
			t.Errorf("%s: location %#x not symbolized, in a mapping marked symbolized", path, l.Address)
		}
		for _, line := range l.Line {
			if line.Function == nil || line.Function.Name == "" || strings.HasPrefix(line.Function.Name, "0x") {
				t.Errorf("%s: location %#x has no function name", path, l.Address)
			}
		}
	}
	for i, f := range p.Function {
		if f.ID != uint64(i+1) {
			t.Errorf("%s: function %d has ID %d", path, i, f.ID)
		}
	}
	// The program's own mapping carries its build ID, and its sites have file:line.
	exe := os.Getenv("HEAPKIT_TEST_PROGRAM")
	foundExe := false
	for _, m := range p.Mapping {
		if m.File == exe {
			foundExe = true
			if m.BuildID != os.Getenv("HEAPKIT_TEST_BUILD_ID") {
				t.Errorf("%s: build ID %q, readelf says %q", path, m.BuildID, os.Getenv("HEAPKIT_TEST_BUILD_ID"))
			}
			if !m.HasFunctions {
				t.Errorf("%s: the program's own mapping (built with -g) is not marked symbolized", path)
			}
		}
	}
	if !foundExe {
		t.Errorf("%s: no mapping for %s", path, exe)
	}
	for _, f := range p.Function {
		if strings.Contains(f.Name, "KeepSmall") && !strings.HasSuffix(f.Filename, "http_workload.cc") {
			t.Errorf("%s: KeepSmall's file is %q", path, f.Filename)
		}
	}
	for _, s := range p.Sample {
		if len(s.NumLabel["bytes"]) != 1 {
			t.Errorf("%s: a sample without the bytes label", path)
			break
		}
	}
	return p
}

func checkProfile(t *testing.T, path string, defaultType string) {
	p := validProfile(t, path, defaultType, 524288, true) // delta_heap: its first answer, no baseline
	// The truth (http_workload.cc), within sampling error (one sample per 512 KiB: ~9% for
	// 64 MiB; 35% is four standard deviations).
	const MiB = 1 << 20
	if got := valueThrough(p, "KeepSmall", 3); !near(got, 64*MiB, 0.35) {
		t.Errorf("%s: KeepSmall in use %d, want about 64 MiB", path, got)
	}
	if got := valueThrough(p, "KeepLarge", 3); !near(got, 32*MiB, 0.35) {
		t.Errorf("%s: KeepLarge in use %d, want about 32 MiB", path, got)
	}
	if got := valueThrough(p, "Churn", 1); !near(got, 64*MiB, 0.35) {
		t.Errorf("%s: Churn allocated %d, want about 64 MiB", path, got)
	}
	if got := valueThrough(p, "Churn", 3); got > 2*MiB {
		t.Errorf("%s: Churn in use %d, want about 0", path, got)
	}
	if got := valueThrough(p, "KeepSmall", 0); !near(got, 65536, 0.35) {
		t.Errorf("%s: KeepSmall objects %d, want about 65536", path, got)
	}
}

func TestHeap(t *testing.T)   { checkProfile(t, "/debug/pprof/heap", "inuse_space") }
func TestAllocs(t *testing.T) { checkProfile(t, "/debug/pprof/allocs", "alloc_space") }

// godeltaprof's delta_heap: the first answer holds the allocations since start (the same
// truths as allocs); the next, with nothing allocated in between, none, but the same in use.
func TestDeltaHeap(t *testing.T) {
	checkProfile(t, "/debug/pprof/delta_heap", "alloc_space")
	p := validProfile(t, "/debug/pprof/delta_heap", "alloc_space", 524288, false)
	const MiB = 1 << 20
	if got := valueThrough(p, "Churn", 1); got != 0 {
		t.Errorf("second delta_heap: Churn allocated %d since the first, want 0", got)
	}
	if got := valueThrough(p, "KeepSmall", 3); !near(got, 64*MiB, 0.35) {
		t.Errorf("second delta_heap: KeepSmall in use %d, want about 64 MiB (absolute)", got)
	}
}

// The heap-growth stacks: every growth recorded (period 1); KeepLarge's 32 MiB made the heap
// take at least that much from the OS.
func TestGrowth(t *testing.T) {
	p := validProfile(t, "/debug/pprof/growth", "inuse_space", 1, false)
	const MiB = 1 << 20
	if got := valueThrough(p, "KeepLarge", 3); got < 32*MiB {
		t.Errorf("growth: KeepLarge grew the heap by %d, want at least 32 MiB", got)
	}
	status, _, body := get(t, "/debug/pprof/growth?debug=1")
	if status != 200 || !bytes.HasPrefix(body, []byte("heap profile:")) || !bytes.Contains(body, []byte("@ growthz")) {
		t.Errorf("growth?debug=1: status %d, %.80q", status, body)
	}
}

// Without HEAPCHECK, no live leak check: one line saying why.
func TestLeaksWithoutChecker(t *testing.T) {
	status, _, body := get(t, "/debug/pprof/leaks")
	if status != 503 || !bytes.Contains(body, []byte("HEAPCHECK")) || bytes.Count(body, []byte("\n")) != 1 {
		t.Errorf("/debug/pprof/leaks without HEAPCHECK: status %d %q", status, body)
	}
}

func TestGcAccepted(t *testing.T) {
	if status, _, _ := get(t, "/debug/pprof/heap?gc=1"); status != 200 {
		t.Errorf("gc=1: status %d", status)
	}
}

func TestDebugText(t *testing.T) {
	status, contentType, body := get(t, "/debug/pprof/heap?debug=1")
	if status != 200 || !strings.HasPrefix(contentType, "text/plain") ||
		!bytes.HasPrefix(body, []byte("heap profile:")) || !bytes.Contains(body, []byte("@ heap_v2/524288")) ||
		!bytes.Contains(body, []byte("\nMAPPED_LIBRARIES:\n")) {
		t.Errorf("debug=1: status %d, %q, %.80q", status, contentType, body)
	}
}

func TestBadRequests(t *testing.T) {
	for path, want := range map[string]int{
		"/debug/pprof/heap?seconds=x": 400, "/debug/pprof/heap?bogus=1": 400,
		"/debug/pprof/heap?debug=7": 400, "/metrics?x": 400, "/nothing": 404, "/debug/pprof/heap/..": 404,
		"/debug/pprof/delta_heap?seconds=1": 400, "/debug/pprof/growth?x=1": 400,
		"/pprof/heap?debug=1": 400, "/pprof/nothing": 404,
	} {
		status, _, body := get(t, path)
		if status != want || bytes.Count(body, []byte("\n")) != 1 {
			t.Errorf("%s: status %d body %q, want %d and one line", path, status, body, want)
		}
	}
}

func TestMetrics(t *testing.T) {
	status, contentType, body := get(t, "/metrics")
	if status != 200 || !strings.HasPrefix(contentType, "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: status %d, %q", status, contentType)
	}
	values := map[string]float64{}
	types := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "# TYPE "):
			types[f[2]] = f[3]
		case strings.HasPrefix(line, "# HELP "):
		default:
			var v float64
			if _, err := fmt.Sscan(f[1], &v); err != nil || len(f) != 2 {
				t.Fatalf("/metrics: bad line %q", line)
			}
			name, _, _ := strings.Cut(f[0], "{") // a labelled series: its family's TYPE
			if types[name] == "" {
				t.Errorf("/metrics: %s has no # TYPE before it", f[0])
			}
			if types[name] == "counter" && !strings.HasSuffix(name, "_total") {
				t.Errorf("/metrics: counter %s does not end in _total", f[0])
			}
			values[f[0]] = v
		}
	}
	// The program holds 96 MiB; the endpoint's own allocations are never sampled into the
	// profile, and what it keeps between answers is heapkit_endpoint_heap_bytes, not in use.
	const MiB = 1 << 20
	inuse := values["heapkit_heap_inuse_bytes"]
	if inuse < 96*MiB || inuse > 160*MiB {
		t.Errorf("heapkit_heap_inuse_bytes %v, want 96 MiB and the endpoint's own", inuse)
	}
	if s := values["heapkit_sampled_inuse_bytes"]; s < 0.65*inuse || s > 1.35*inuse {
		t.Errorf("heapkit_sampled_inuse_bytes %v far from heapkit_heap_inuse_bytes %v", s, inuse)
	}
	if values["heapkit_heap_mapped_bytes"] < inuse || values["process_resident_memory_bytes"] < 32*MiB {
		t.Errorf("mapped %v, RSS %v", values["heapkit_heap_mapped_bytes"], values["process_resident_memory_bytes"])
	}
	if a := values["heapkit_allocated_bytes_total"]; a < 0.65*160*MiB {
		t.Errorf("heapkit_allocated_bytes_total %v, want at least about 160 MiB", a)
	}
	for _, name := range []string{"heapkit_pageheap_free_bytes", "heapkit_pageheap_released_bytes",
		"heapkit_thread_cache_free_bytes", "heapkit_central_cache_free_bytes", "heapkit_metadata_reserved_bytes",
		"heapkit_metadata_resident_bytes", "heapkit_endpoint_heap_bytes", "process_start_time_seconds",
		"heapkit_freed_objects_total", "heapkit_heap_fragmentation_bytes"} {
		if _, ok := values[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

func TestIndexAndCmdline(t *testing.T) {
	status, contentType, body := get(t, "/debug/pprof/")
	if status != 200 || !strings.HasPrefix(contentType, "text/html") ||
		!bytes.Contains(body, []byte(`href="heap"`)) || !bytes.Contains(body, []byte(`href="allocs"`)) {
		t.Errorf("/debug/pprof/: status %d, %q, %.200q", status, contentType, body)
	}
	status, _, body = get(t, "/debug/pprof/cmdline")
	if status != 200 || string(body) != os.Getenv("HEAPKIT_TEST_PROGRAM") {
		t.Errorf("/debug/pprof/cmdline: status %d, %q, want %q", status, body, os.Getenv("HEAPKIT_TEST_PROGRAM"))
	}
}

// seconds=N: Go's delta, p(t+N) − p(t). The workload allocates nothing after "ready", so its
// sites vanish from the delta while the plain profile holds them; the server meanwhile answers
// other requests at once.
func TestSecondsDelta(t *testing.T) {
	start := time.Now()
	done := make(chan []byte)
	go func() {
		status, _, body := get(t, "/debug/pprof/allocs?seconds=2")
		if status != 200 {
			t.Errorf("seconds=2: status %d %q", status, body)
		}
		done <- body
	}()
	time.Sleep(300 * time.Millisecond)
	before := time.Now()
	if status, _, _ := get(t, "/metrics"); status != 200 {
		t.Errorf("/metrics during a delta: status %d", status)
	}
	if waited := time.Since(before); waited > time.Second {
		t.Errorf("/metrics took %v while a delta was pending", waited)
	}
	body := <-done
	if elapsed := time.Since(start); elapsed < 2*time.Second {
		t.Errorf("seconds=2 answered after %v", elapsed)
	}
	p, err := profile.ParseData(body)
	if err != nil {
		t.Fatalf("seconds=2: ParseData: %v", err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("seconds=2: CheckValid: %v", err)
	}
	if p.DurationNanos != 2e9 || p.DefaultSampleType != "alloc_space" || len(p.SampleType) != 4 {
		t.Errorf("seconds=2: duration %d, default %q", p.DurationNanos, p.DefaultSampleType)
	}
	if age := time.Since(time.Unix(0, p.TimeNanos)); age < 2*time.Second || age > time.Minute {
		t.Errorf("seconds=2: time_nanos is not the start of the window (%v ago)", age)
	}
	for _, f := range []string{"KeepSmall", "KeepLarge", "Churn"} {
		if v := valueThrough(p, f, 1); v != 0 {
			t.Errorf("seconds=2: %s allocated %d in the window, want 0", f, v)
		}
	}
	for path, want := range map[string]int{
		"/debug/pprof/heap?seconds=0": 400, "/debug/pprof/heap?seconds=61": 400,
		"/debug/pprof/heap?seconds=1&debug=1": 400, "/debug/pprof/heap?seconds=1x": 400,
	} {
		if status, _, _ := get(t, path); status != want {
			t.Errorf("%s: status %d, want %d", path, status, want)
		}
	}
}
