// libFuzzer target: profile.proto input (gzipped or not) through the reader; whatever it
// accepts must go through the pipeline, be written again by the writer and read back with the
// same number of samples. Never crash, hang, leak or allocate without bound; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pprof-tool/proto/gzip_io.h"
#include "pprof-tool/proto/profile_reader.h"
#include "pprof-tool/proto/profile_writer.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/report/reports.h"
#include "pprof-tool/load/table_symbolizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heapkit::pprof;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string unzipped, error;
  ProtoLimits limits;
  limits.max_bytes = size_t{16} << 20;
  limits.max_strings = limits.max_samples = limits.max_locations = limits.max_functions = 100000;
  if (IsGzip(bytes)) {
    if (!GunzipBounded(bytes, limits.max_bytes, &unzipped, &error)) return 0;
    bytes = unzipped;
  }
  (void)LooksLikeProfileProto(bytes.substr(0, 4096));
  Profile p;
  ParseError e;
  if (!DecodeProfileProto(bytes, "fuzz.pb", &p, &e, limits)) {
    (void)e.Message();
    return 0;
  }
  if (p.samples.size() > 5000) return 0;
  p.mappings.clear();  // never open files the input names
  p.maps_text.clear();
  auto sym = MakeTableSymbolizer(p.symbols);
  PipelineOptions o;
  StackSamples s;
  if (!BuildStackSamples(p, *sym, o, &s, &error)) return 0;
  (void)TextReport(s, ReportOptions());
  std::string out;
  if (!EncodeProfileProto(p, *sym, ProtoWriteOptions(), &out, &error)) return 0;
  Profile back;
  if (!DecodeProfileProto(out, "again.pb", &back, &e))
    __builtin_trap();  // we must read what we write
  return 0;
}
