// `pprof-tool --http=[host]:port`: serves the views of web_ui.h with cpp-httplib until SIGINT or
// SIGTERM. Binds 127.0.0.1 when the host is empty (never all interfaces unless asked); port 0
// picks a free port. Prints "Serving web UI on http://<host>:<port>" on stdout once listening,
// then opens that URL with $BROWSER / xdg-open if there is one and open_browser is set.
// Each connection has a thread (connection_threads.h); a request passes request_guard.h (Host,
// cross-site) before web_ui.h answers it. SIGINT/SIGTERM are taken by sigwait in a thread of their
// own, which stops the server; the call then returns 0.
#pragma once

#include <string>

#include "pprof-tool/web/web_input.h"

namespace heapkit::pprof {

struct ListenAddress {
  std::string host;  // "127.0.0.1" when given empty
  int port = 0;
};

// "[host]:port" (go pprof's -http syntax; "[::1]:8080" for IPv6). One line in *error if bad.
bool ParseListenAddress(const std::string& text, ListenAddress* address, std::string* error);

// Returns the exit status: 0 after a signal, 2 (one line on stderr) if the address cannot be
// bound.
int ServeWebUi(const WebInput& input, const ListenAddress& address, bool open_browser);

}  // namespace heapkit::pprof
