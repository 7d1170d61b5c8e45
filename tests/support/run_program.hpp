// Runs a program the way a user would, capturing stdout, stderr and the exit code.
// Header-only and free of the library: the end-to-end tests link only GoogleTest.
//   const ProgramRun run = run_program(GEMMLAB_EXE, {"list", "--format", "json"});
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace gemmlab::testing {

struct ProgramRun {
  int exit_code = -1;  // -1 when the program did not exit normally (a signal)
  std::string out, err;
  std::string command;  // as the shell ran it, for failure messages

  // stderr's lines, without their newlines.
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream stream(err);
    for (std::string line; std::getline(stream, line);) lines.push_back(line);
    return lines;
  }
};

// Single-quoted for /bin/sh: no argument is ever interpreted.
inline std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (const char ch : arg) {
    if (ch == '\'') quoted += "'\\''";  // close, an escaped quote, reopen
    else quoted += ch;
  }
  quoted += '\'';
  return quoted;
}

// A directory of its own for the files of one test, removed with it.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("gemmlab-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline ProgramRun run_program(const std::string& program, const std::vector<std::string>& args) {
  ProgramRun run;
  const ScratchDir scratch;
  const std::filesystem::path err_path = scratch.path() / "stderr";
  run.command = shell_quote(program);
  for (const std::string& arg : args) {
    run.command += ' ';
    run.command += shell_quote(arg);
  }
  std::string shell = run.command;
  shell += " 2>";
  shell += shell_quote(err_path.string());
  shell += " </dev/null";
  std::FILE* pipe = ::popen(shell.c_str(), "r");
  if (!pipe) return run;
  constexpr std::size_t kChunk = 4096;
  char buffer[kChunk];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.out.append(buffer, got);
  const int status = ::pclose(pipe);
  run.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = read_file(err_path);
  return run;
}

// A program started in the background (stdout and stderr to files), to be signalled while it
// runs: Spawned p(GEMMLAB_EXE, {...}); p.wait_for_stderr("seed"); p.signal(SIGINT); p.wait();
class Spawned {
 public:
  Spawned(const std::string& program, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {program};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = (scratch_.path() / "stdout").string(), err = (scratch_.path() / "stderr").string();
    err_path_ = err;
    pid_ = ::fork();
    if (pid_ == 0) {
      std::freopen(out.c_str(), "w", stdout);
      std::freopen(err.c_str(), "w", stderr);
      std::vector<char*> raw;
      for (std::string& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      ::execv(program.c_str(), raw.data());
      ::_exit(127);
    }
  }
  ~Spawned() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  std::string err() const { return read_file(err_path_); }
  // Polls stderr until it holds `text` or `seconds` pass; whether it came.
  bool wait_for_stderr(const std::string& text, double seconds) const {
    for (double waited = 0; waited < seconds; waited += 0.02) {
      if (err().find(text) != std::string::npos) return true;
      ::usleep(20000);
    }
    return false;
  }
  void signal(int number) const { ::kill(pid_, number); }
  // The raw wait status (WIFSIGNALED, WTERMSIG, WEXITSTATUS read it).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return status;
  }

 private:
  ScratchDir scratch_;
  std::string err_path_;
  pid_t pid_ = -1;
  bool waited_ = false;
};

}  // namespace gemmlab::testing
