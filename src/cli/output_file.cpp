#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

namespace gemmlab::cli {
namespace {

// The temporary a signal must remove: a fixed buffer, since a handler may not allocate.
// The program's one piece of mutable global state; only this file and its handler touch it.
constexpr std::size_t kPathCapacity = 4096;
char g_pending[kPathCapacity];
std::atomic<bool> g_has_pending{false};

void register_pending(const std::string& path) {
  if (path.size() >= kPathCapacity) return;  // open() refuses such paths first
  g_has_pending.store(false);
  std::memcpy(g_pending, path.c_str(), path.size() + 1);
  g_has_pending.store(true);
}
void clear_pending() { g_has_pending.store(false); }

extern "C" void remove_pending_and_reraise(int signal_number) {
  if (g_has_pending.load()) ::unlink(g_pending);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

void install_output_signal_handlers() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action {};
    action.sa_handler = remove_pending_and_reraise;
    sigemptyset(&action.sa_mask);
    ::sigaction(s, &action, nullptr);
  }
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temporary_.empty()) {
    clear_pending();
    ::unlink(temporary_.c_str());
    temporary_.clear();
  }
}

bool OutputFile::open(const std::string& path, std::string& error) {
  discard();
  path_ = path;
  if (path.empty()) return true;
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) {
    error = fmt::format("cannot write --output '{}': it is a folder", path);
    return false;
  }
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path temporary =
      folder / fmt::format(".{}.{}.gemmlab-tmp", target.filename().string(), static_cast<long>(::getpid()));
  if (temporary.string().size() >= kPathCapacity) {
    error = fmt::format("cannot write --output '{}': the path is too long", path);
    return false;
  }
  // 0666 less the umask, as a file the shell's redirection would create.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = fmt::format("cannot write --output '{}': {}", path, std::strerror(errno));
    return false;
  }
  temporary_ = temporary.string();
  register_pending(temporary_);
  // An existing target keeps its permissions.
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) ::fchmod(fd, existing.st_mode & 07777);
  file_ = ::fdopen(fd, "w");
  if (!file_) {
    ::close(fd);
    error = fmt::format("cannot write --output '{}': {}", path, std::strerror(errno));
    discard();
    return false;
  }
  return true;
}

bool OutputFile::open_or_report(const std::string& path) {
  std::string error;
  if (open(path, error)) return true;
  fmt::print(stderr, "gemmlab: {}\n", error);
  return false;
}

bool OutputFile::commit_or_report() {
  std::string error;
  if (commit(error)) return true;
  fmt::print(stderr, "gemmlab: {}\n", error);
  return false;
}

bool OutputFile::commit(std::string& error) {
  if (!file_) {
    if (std::fflush(stdout) != 0) {
      error = fmt::format("cannot write the report to stdout: {}", std::strerror(errno));
      return false;
    }
    return true;
  }
  bool ok = std::fflush(file_) == 0 && !std::ferror(file_) && ::fsync(::fileno(file_)) == 0;
  const int saved = errno;
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  if (ok && ::rename(temporary_.c_str(), path_.c_str()) != 0) ok = false;
  if (!ok) {
    error = fmt::format("cannot write --output '{}': {}", path_, std::strerror(errno ? errno : saved));
    discard();
    return false;
  }
  clear_pending();
  temporary_.clear();
  return true;
}

}  // namespace gemmlab::cli
