// Separate debug info for a module without elfutils' debuginfod client in this process, unless
// the process may have it (SymbolSearch::debuginfod).
//
// Why: libdwfl's dwfl_standard_find_debuginfo ends, when its local search finds nothing (any
// stripped library with no -dbg package: libcurl, libssl...), in elfutils' debuginfod client.
// libdw 0.188 loads it on the first such module (dwfl_get_debuginfod_client: one pthread_once
// that dlopens libdebuginfod.so.1) whether DEBUGINFOD_URLS is set or not, and that library links
// libcurl — and through it OpenSSL, GnuTLS, libssh2, krb5, LDAP — and runs curl_global_init
// from its constructor. In a program checked at exit these are the program's own libraries,
// possibly already torn down (OpenSSL's atexit cleanup): initialising them again crashes the
// report, and loading them costs ~0.2 s when it does not.
//
// So the symbolizer searches locally itself — libdwfl's build-id search
// (dwfl_build_id_find_debuginfo, local only), then the `.gnu_debuglink` name beside the file,
// in its `.debug/`, and under each absolute debug directory followed by the file's directory,
// checked by build-id (or by the link's CRC when the file has none) — and asks debuginfod only
// when DEBUGINFOD_URLS is non-empty, the way SymbolSearch::debuginfod says (symbolizer.h).
#pragma once

#include <elfutils/libdwfl.h>

#include <set>
#include <string>
#include <vector>

#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

// What the callback needs; one per symbolizer, set as each module's userdata
// (dwfl_module_info) right after the module is reported.
struct LocalDebuginfoSearch {
  std::vector<std::string> debug_dirs;  // absolute: the symbol path's, then /usr/lib/debug
  DebuginfodClient debuginfod = DebuginfodClient::kInProcess;
  std::set<std::string> asked_helper;  // build-ids the helper was run for (libdwfl asks twice)
};

// Dwfl_Callbacks::find_debuginfo. *userdata must point to a LocalDebuginfoSearch (else only
// libdwfl's build-id search runs); the helper's answers are remembered there.
int FindDebuginfoWithoutClient(Dwfl_Module* mod, void** userdata, const char* modname,
                               Dwarf_Addr base, const char* file_name, const char* debuglink_file,
                               GElf_Word debuglink_crc, char** debuginfo_file_name);

// The debug file for `build_id_hex` from `debuginfod-find` run in a child process (its
// environment without the heapkit and preload variables, stdin and stderr on /dev/null); the
// cached file's path, or "" when it failed or is not installed.
std::string FetchDebuginfoInHelper(const std::string& build_id_hex);

}  // namespace heapkit::pprof
