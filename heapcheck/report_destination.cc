#include "heapcheck/report_destination.h"

#include <errno.h>
#include <fcntl.h>
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
};
StartupStderr g_stderr;
char g_report_prefix[PATH_MAX];
int g_report_file = -1;       // HEAP_CHECK_REPORT_PATH's file, once opened
pid_t g_report_file_pid = 0;  // the process that opened it (a forked child opens its own)

int CreateReportFile(const char* path) {
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

bool StderrUnchanged() {
  struct stat st;
  return g_stderr.open && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == g_stderr.dev &&
         st.st_ino == g_stderr.ino;
}

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
