#include "heapcheck/report_destination.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "alloc/internal/log.h"

namespace heapkit::check {
namespace {

struct StartupStderr {
  bool open = false;
  bool terminal = false;
  dev_t dev = 0;
  ino_t ino = 0;
  int copy = -1;  // a close-on-exec duplicate, when stderr is a file or a terminal
};
StartupStderr g_stderr;

// The lowest number the duplicate may take: far above the descriptors a program usually has
// (and above FD_SETSIZE's range where the limit allows), below the soft limit.
int CopyFloor() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur > 1024 + 64)
    return 1024;
  return limit.rlim_cur > 64 ? static_cast<int>(limit.rlim_cur) - 32 : 3;
}

// Whether descriptor fd is still the file stderr was at start-up.
bool IsStartupStderr(int fd) {
  struct stat st;
  return g_stderr.open && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == g_stderr.dev &&
         st.st_ino == g_stderr.ino;
}
char g_report_prefix[PATH_MAX];
int g_report_file = -1;       // HEAP_CHECK_REPORT_PATH's file, once opened
pid_t g_report_file_pid = 0;  // the process that opened it (a forked child opens its own)

int CreateReportFile(const char* path) {
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

bool StderrUnchanged() { return IsStartupStderr(STDERR_FILENO); }

// The start-up duplicate, while it still is that file (a program that closes every descriptor
// may have closed it, and its number may now be another file's).
int StartupStderrCopy() { return IsStartupStderr(g_stderr.copy) ? g_stderr.copy : -1; }

// HEAP_CHECK_REPORT_PATH's <prefix>.<pid>, opened on the first report of this process.
int ExplicitReportFile() {
  if (g_report_file >= 0 && g_report_file_pid == getpid()) return g_report_file;
  char path[PATH_MAX + 16];
  internal::FormatTo(path, sizeof(path), "%s.%d", g_report_prefix, static_cast<int>(getpid()));
  g_report_file = CreateReportFile(path);
  g_report_file_pid = getpid();
  if (g_report_file < 0 && StderrUnchanged()) {
    internal::Log("cannot create HEAP_CHECK_REPORT_PATH file %s: %s; the report goes to stderr",
                  path, strerror(errno));
  }
  return g_report_file;
}

void TellTerminal(const char* what) {
  if (!g_stderr.terminal) return;
  const int tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (tty < 0) return;
  const int previous = internal::SetLogFd(tty);
  internal::Log("%s", what);
  internal::SetLogFd(previous);
  close(tty);
}

}  // namespace

void RememberReportDestination(const char* report_path_prefix) {
  struct stat st;
  if (fstat(STDERR_FILENO, &st) == 0) {
    g_stderr.open = true;
    g_stderr.dev = st.st_dev;
    g_stderr.ino = st.st_ino;
    g_stderr.terminal = isatty(STDERR_FILENO) == 1;
    // Not for a pipe or a socket: its reader waits for every writer to close it, and a copy
    // kept here would keep a caller (`out=$(daemon 2>&1)`) waiting on a program that closed
    // stderr to let it go on.
    if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
      g_stderr.copy = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, CopyFloor());
  }
  if (report_path_prefix != nullptr && report_path_prefix[0] != '\0') {
    if (std::strlen(report_path_prefix) >= sizeof(g_report_prefix)) {
      internal::Log("ignoring HEAP_CHECK_REPORT_PATH: longer than %zu bytes",
                    sizeof(g_report_prefix) - 1);
    } else {
      std::strcpy(g_report_prefix, report_path_prefix);
    }
  }
}

ReportDestination::ReportDestination(const char* dump_directory, const char* check_name,
                                     bool create_file) {
  int fd = -1;
  if (g_report_prefix[0] != '\0') {
    fd = ExplicitReportFile();
    explicit_file_ = fd >= 0;
  }
  if (fd < 0 && StderrUnchanged()) {
    fd = STDERR_FILENO;
    terminal_ = g_stderr.terminal;
  }
  if (fd < 0 && (fd = StartupStderrCopy()) >= 0) terminal_ = g_stderr.terminal;
  if (fd < 0 && create_file) {
    char path[PATH_MAX + 64];
    internal::FormatTo(path, sizeof(path), "%s/%s.%d.%s-end.report", dump_directory,
                       program_invocation_short_name, static_cast<int>(getpid()), check_name);
    fd = file_fd_ = CreateReportFile(path);
    char line[sizeof(path) + 160];
    if (fd >= 0) {
      internal::FormatTo(line, sizeof(line),
                         "stderr was closed or replaced before the leak check; the report is in %s",
                         path);
    } else {
      internal::FormatTo(line, sizeof(line),
                         "stderr was closed or replaced before the leak check, and %s cannot be "
                         "created (%s): the report is lost",
                         path, strerror(errno));
    }
    TellTerminal(line);
  }
  fd_ = fd;
  previous_fd_ = internal::SetLogFd(fd);
}

ReportDestination::~ReportDestination() {
  internal::SetLogFd(previous_fd_);
  if (file_fd_ >= 0) close(file_fd_);
}

}  // namespace heapkit::check
