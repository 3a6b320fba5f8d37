// Malloc-free reading of configuration from the environment.
//
// getenv() is not used: it is not safe before libc is initialised in every configuration, and
// we may be called from the first malloc. We read /proc/self/environ-equivalent data through
// the `environ` pointer, which the dynamic loader sets before any constructor runs.
//
// Rule (README.md, "Runtime rules" 5): a malformed or out-of-range value prints exactly one line
//   heapkit: ignoring NAME='value': <why>; using default <default>
// and the default is used. Unset or empty variables silently give the default.
#pragma once

#include <sys/auxv.h>

#include <cstddef>
#include <cstdint>

namespace heapkit::internal {

// Returns the raw value of NAME or nullptr. The pointer points into the environment block:
// copy what must outlive start-up (programs that set their process title overwrite it).
//
// Privileged processes: when the kernel started the program with AT_SECURE set (setuid,
// setgid, file capabilities, LSM transitions), every variable reads as unset, silently — the
// rule glibc applies to MALLOC_*. The caller's environment must not choose where a privileged
// process writes files, which files it reads, or make it print addresses. Every heapkit
// variable is read through this function, so this is the one place the rule lives.
const char* EnvRaw(const char* name);

// True when the process runs with AT_SECURE (see EnvRaw). getauxval reads the auxiliary vector
// libc saved at start-up: no allocation, no lock. Inline, so that the tools' reader
// (settings.h, ToolSettingText), which links none of the runtime, applies the same rule.
inline bool SecureExecution() { return getauxval(AT_SECURE) != 0; }

// A copy of text fit for a one-line message: control characters become '?', and a value
// longer than the buffer is cut with "...". Returns buf.
inline constexpr size_t kPrintableValueSize = 200;
const char* PrintableValue(const char* text, char* buf, size_t size);

// The typed readers below are the primitives of settings.h's readers, which every component
// calls with an entry of its settings table: read a variable through those, not these.

// Integer with optional size suffix k/K, m/M, g/G (powers of 1024) when allow_suffix is true.
int64_t EnvInt64(const char* name, int64_t default_value, int64_t min_value, int64_t max_value,
                 bool allow_suffix = false);

// EnvInt64 that says whether the variable gave the value: true if set to an accepted value
// (then *out is it), else *out = default_value.
bool EnvInt64Given(const char* name, int64_t default_value, int64_t min_value, int64_t max_value,
                   bool allow_suffix, int64_t* out);

// Floating point value within [min_value, max_value].
double EnvDouble(const char* name, double default_value, double min_value, double max_value);

// true/false spellings: 1/0, true/false, yes/no, on/off (case-insensitive).
bool EnvBool(const char* name, bool default_value);

// Parsers used by the above, exposed for unit tests. Return false on malformed input.
bool ParseInt64(const char* text, bool allow_suffix, int64_t* out);
bool ParseDouble(const char* text, double* out);
bool ParseBool(const char* text, bool* out);

}  // namespace heapkit::internal
