// The calling thread's recording switch (thread_recording.h).
#include "profiler/base/thread_recording.h"

namespace heapkit::prof {

__thread bool tls_recording_disabled __attribute__((tls_model("initial-exec"))) = false;

void SetThreadRecordingDisabled(bool disabled) { tls_recording_disabled = disabled; }

}  // namespace heapkit::prof
