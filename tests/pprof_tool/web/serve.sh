# Sourced by the web UI's shell scripts. serve_web_ui <log dir> <pprof-tool> <args...>: starts
# `pprof-tool --http=127.0.0.1:0 --no_browser <args>` in the background and waits (10 s at most)
# for its "Serving web UI on <url>" line. Sets $server (its pid; the caller kills it) and $url
# ("" if the line never came; the output is in <log dir>/server.out and server.err).
serve_web_ui() {
  _dir=$1 _pprof=$2
  shift 2
  "$_pprof" --http=127.0.0.1:0 --no_browser "$@" >"$_dir/server.out" 2>"$_dir/server.err" &
  server=$!
  url=
  for _ in $(seq 100); do
    url=$(sed -n 's|^Serving web UI on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$_dir/server.out")
    [ -n "$url" ] && return 0
    sleep 0.1
  done
}
