#include "io/source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "io/decompress.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"

namespace mfu::detail {
namespace {

// Bytes read from files and stdin so far, by every thread (before decompression).
std::atomic<std::uint64_t> g_bytes_read{0};

class FdSource : public ByteSource {
 public:
  FdSource(int fd, bool owned, std::string name, std::uint64_t size)
      : fd_(fd), owned_(owned), name_(std::move(name)), size_(size) {}
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  std::size_t read(char* buf, std::size_t n) override {
    for (;;) {
      const ssize_t got = ::read(fd_, buf, n);
      if (got >= 0) {
        g_bytes_read.fetch_add(static_cast<std::uint64_t>(got), std::memory_order_relaxed);
        return static_cast<std::size_t>(got);
      }
      if (errno == EINTR) continue;
      throw Error(fmt::format("cannot read '{}': {}", name_, std::strerror(errno)));
    }
  }
  std::uint64_t size_hint() const override { return size_; }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  std::uint64_t size_;
};

class RangeSource : public ByteSource {
 public:
  RangeSource(int fd, std::string name, std::uint64_t begin, std::uint64_t end)
      : fd_(fd), name_(std::move(name)), pos_(begin), end_(end), size_(end - begin) {}
  std::uint64_t size_hint() const override { return size_; }
  ~RangeSource() override { ::close(fd_); }
  RangeSource(const RangeSource&) = delete;
  RangeSource& operator=(const RangeSource&) = delete;
  std::size_t read(char* buf, std::size_t n) override {
    if (pos_ >= end_) return 0;
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, end_ - pos_));
    for (;;) {
      const ssize_t got = ::pread(fd_, buf, n, static_cast<off_t>(pos_));
      if (got >= 0) {
        g_bytes_read.fetch_add(static_cast<std::uint64_t>(got), std::memory_order_relaxed);
        pos_ += static_cast<std::uint64_t>(got);
        if (got == 0) pos_ = end_;  // the file shrank under us
        return static_cast<std::size_t>(got);
      }
      if (errno == EINTR) continue;
      throw Error(fmt::format("cannot read '{}': {}", name_, std::strerror(errno)));
    }
  }

 private:
  int fd_;
  std::string name_;
  std::uint64_t pos_, end_, size_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  std::size_t read(char* buf, std::size_t n) override {
    const std::size_t k = std::min(n, bytes_.size() - pos_);
    std::memcpy(buf, bytes_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  std::uint64_t size_hint() const override { return bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

/// Replays bytes already read for sniffing, then continues with the inner source.
class PrefixSource : public ByteSource {
 public:
  PrefixSource(std::unique_ptr<ByteSource> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  std::size_t read(char* buf, std::size_t n) override {
    if (pos_ < prefix_.size()) {
      const std::size_t k = std::min(n, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return inner_->read(buf, n);
  }
  std::uint64_t size_hint() const override { return inner_->size_hint(); }
  bool truncated() const override { return inner_->truncated(); }
  const char* encoding() const override { return inner_->encoding(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string prefix_;
  std::size_t pos_ = 0;
};

/// `raw`, decompressed when its magic bytes say gzip or zstd; `ahead`: on a thread of its own.
std::unique_ptr<ByteSource> wrap(std::unique_ptr<ByteSource> raw, const std::string& name,
                                 bool ahead) {
  char magic[4];
  const std::size_t have = read_fully(*raw, magic, sizeof(magic));
  auto prefixed = std::make_unique<PrefixSource>(std::move(raw), std::string(magic, have));
  const auto* m = reinterpret_cast<const unsigned char*>(magic);
  std::unique_ptr<ByteSource> out;
  if (have >= 2 && m[0] == 0x1f && m[1] == 0x8b)
    out = gzip_source(std::move(prefixed), name);
  else if (have >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
    out = zstd_source(std::move(prefixed), name);
  else
    return prefixed;
  return ahead ? read_ahead(std::move(out)) : std::move(out);
}

}  // namespace

std::size_t read_fully(ByteSource& src, char* buf, std::size_t n) {
  std::size_t have = 0;
  while (have < n) {
    const std::size_t got = src.read(buf + have, n - have);
    if (got == 0) break;
    have += got;
  }
  return have;
}

std::unique_ptr<ByteSource> open_source(const std::string& path) {
  if (path == "-")
    return wrap(std::make_unique<FdSource>(STDIN_FILENO, false, "stdin", 0), "stdin", false);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(fmt::format("cannot open '{}': {}", path, std::strerror(err)),
                err == ENOENT ? "check the path" : "check the file's permissions");
  }
  struct stat st {};
  std::uint64_t size = 0;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw Error(fmt::format("'{}' is a directory", path));
    }
    size = static_cast<std::uint64_t>(st.st_size);
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  // A file is read ahead (decompressed on its own thread); stdin is not: a pipe that stays
  // open would keep that thread waiting after the reader is done.
  return wrap(std::make_unique<FdSource>(fd, true, path, size), path, true);
}

std::unique_ptr<ByteSource> open_file_range(const std::string& path, std::uint64_t begin,
                                            std::uint64_t end) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin),
                  POSIX_FADV_SEQUENTIAL);
#endif
  return std::make_unique<RangeSource>(fd, path, begin, end);
}

std::uint64_t plain_file_size(const std::string& path) {
  if (path == "-") return 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st {};
  std::uint64_t size = 0;
  unsigned char m[4] = {0, 0, 0, 0};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::pread(fd, m, 4, 0) == 4) {
    const bool gz = m[0] == 0x1f && m[1] == 0x8b;
    const bool zst = m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd;
    if (!gz && !zst) size = static_cast<std::uint64_t>(st.st_size);
  }
  ::close(fd);
  return size;
}

std::unique_ptr<ByteSource> memory_source(std::string_view bytes) {
  return wrap(std::make_unique<MemorySource>(bytes), "memory", false);
}

std::unique_ptr<ByteSource> with_prefix(std::unique_ptr<ByteSource> inner, std::string prefix) {
  return std::make_unique<PrefixSource>(std::move(inner), std::move(prefix));
}

std::string read_all(ByteSource& src, std::size_t limit, const std::string& name) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const std::size_t got = src.read(buf, sizeof(buf));
    if (got == 0) break;
    if (out.size() + got > limit)
      throw Error(
          fmt::format("'{}' is larger than {} MiB, too large for this format", name, limit >> 20));
    out.append(buf, got);
  }
  return out;
}

}  // namespace mfu::detail

namespace mfu {

std::uint64_t bytes_read_so_far() {
  return detail::g_bytes_read.load(std::memory_order_relaxed);
}

}  // namespace mfu
