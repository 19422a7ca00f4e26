// Report outputs: temporary-and-rename for regular files, write-through for devices and FIFOs,
// refusal of an output that is an input or read-only (output.hpp).
#include "output.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "mfu/error.hpp"

namespace mfu::cli {
namespace fs = std::filesystem;
namespace {

void refuse_inputs(const std::string& path, const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::equivalent(path, in, ec))
      throw Error(fmt::format("the output '{}' is one of the inputs", path),
                  "write the report to another file; the log would be overwritten");
  }
}

std::unique_ptr<std::ofstream> open_or_throw(const std::string& path, const std::string& shown) {
  auto f = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*f)
    throw Error(fmt::format("cannot write '{}'", shown),
                "check that the folder exists and is writable");
  return f;
}

}  // namespace

Output::Output(const std::string& path, const std::vector<std::string>& inputs) : path_(path) {
  if (path_.empty() || path_ == "-") {
    path_.clear();
    return;
  }
  refuse_inputs(path_, inputs);
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    throw Error(fmt::format("the output '{}' is a folder", path_), "name a file to write");
  if (exists && !S_ISREG(st.st_mode)) {
    file_ = open_or_throw(path_, path_);  // a device or FIFO: write through, keep the node
    return;
  }
  if (exists && (st.st_mode & S_IWUSR) == 0)
    throw Error(fmt::format("the output '{}' is read-only", path_),
                "make it writable or write the report elsewhere");
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  temp_ = (dir / fmt::format(".{}.mfu-tmp-{}", target.filename().string(), ::getpid())).string();
  file_ = open_or_throw(temp_, path_);
  if (exists) ::chmod(temp_.c_str(), st.st_mode & 07777);  // the report keeps the target's mode
}

Output::~Output() {
  if (file_ && !committed_ && !temp_.empty()) {
    file_->close();
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

std::ostream& Output::stream() {
  return file_ ? static_cast<std::ostream&>(*file_) : std::cout;
}

void Output::commit() {
  if (!file_) {
    flush_stdout();
    return;
  }
  file_->flush();
  if (!*file_) throw Error(fmt::format("writing '{}' failed", path_), "check free disk space");
  file_->close();
  if (!temp_.empty()) {
    std::error_code ec;
    fs::rename(temp_, path_, ec);
    if (ec)
      throw Error(
          fmt::format("cannot move the report into place at '{}': {}", path_, ec.message()));
  }
  committed_ = true;
}

void flush_stdout() {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed && errno != EPIPE)
    throw Error("writing to standard output failed",
                errno ? std::string(std::strerror(errno)) : std::string("check where it goes"));
}

}  // namespace mfu::cli
