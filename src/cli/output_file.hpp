// --output written whole: the report goes to a temporary file beside the target and is
// renamed over it only once complete, so a failure, Ctrl-C or SIGTERM at any point leaves
// an existing file as it was (and no temporary behind).
#pragma once

#include <cstdio>
#include <string>

namespace gemmlab::cli {

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();  // not committed: the temporary is removed, the target untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Empty `path`: stdout. Otherwise creates the temporary in the target's folder now, so
  // an unwritable path fails before minutes of benchmarking; false and `error` on failure.
  bool open(const std::string& path, std::string& error);
  std::FILE* stream() const { return file_ ? file_ : stdout; }
  // Flushes the temporary to disk and renames it over the target (stdout: flushes).
  bool commit(std::string& error);
  // The same, saying what failed in one line on stderr ("gemmlab: cannot write ...").
  bool open_or_report(const std::string& path);
  bool commit_or_report();
  const std::string& temporary() const { return temporary_; }

 private:
  void discard();
  std::string path_, temporary_;
  std::FILE* file_ = nullptr;
};

// SIGINT, SIGTERM and SIGHUP remove the open temporary, then end the program as the signal
// would have. Installed once by main; the handler reads only what OutputFile registers.
void install_output_signal_handlers();

}  // namespace gemmlab::cli
