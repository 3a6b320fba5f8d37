// Where a leak report is written: stderr as it was when the program started, or a file.
//
// Programs close stderr at exit (gnulib's close_stdout in tar, sort, xz... runs from an atexit
// handler, before the check) and may open another file that takes descriptor 2. So the report
// never trusts descriptor 2 blindly: at start-up the checker notes what stderr is (device and
// inode, and whether it is a terminal); when a report is about to be written,
//   1. HEAP_CHECK_REPORT_PATH=<prefix> set: the report goes to <prefix>.<pid> (LeakSanitizer's
//      log_path idea; one file per process, created O_EXCL|O_NOFOLLOW, mode 0600, kept open for
//      the process's later reports);
//   2. else descriptor 2 still the same file: stderr;
//   3. else (closed, or now another file) the duplicate of stderr taken at start-up, while it
//      is still that file: a close-on-exec descriptor numbered above the program's usual ones
//      (F_DUPFD_CLOEXEC from 1024, or near the soft limit when that is lower), kept only when
//      stderr is a file or a terminal — never a pipe or socket, whose reader would wait for
//      it to close. A program that closed every descriptor closed it too (or its number is
//      another file now: device and inode tell);
//   4. else <dump directory>/<prog>.<pid>.<check>-end.report, next to the .heap file, created
//      the same way; when stderr was a terminal, one line on the terminal (/dev/tty) names it.
// The logger (alloc/internal/log.h) is pointed at the chosen descriptor for the report's
// duration and back afterwards.
#pragma once

#include <sys/types.h>

namespace heapkit::check {

// Start-up: remembers what descriptor 2 is, copies HEAP_CHECK_REPORT_PATH.
void RememberReportDestination(const char* report_path_prefix);

// The report's destination while it lives (see above). `dump_directory` and `check_name` name
// the fallback file, created only when `create_file` (there is something to report): with
// stderr gone and nothing to report, nothing is written anywhere.
class ReportDestination {
 public:
  ReportDestination(const char* dump_directory, const char* check_name, bool create_file);
  ~ReportDestination();
  ReportDestination(const ReportDestination&) = delete;
  ReportDestination& operator=(const ReportDestination&) = delete;

  // A person reads it: the explicit report file, or stderr that is a terminal. (A clean
  // check's line is written only there, or with PERFTOOLS_VERBOSE > 0: check_driver.h.)
  bool ReadByAPerson() const { return explicit_file_ || terminal_; }

 private:
  int fd_ = -1;
  int previous_fd_ = -1;
  int file_fd_ = -1;  // the fallback file, closed at the end
  bool explicit_file_ = false;
  bool terminal_ = false;
};

}  // namespace heapkit::check
