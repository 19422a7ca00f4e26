#include "io/source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

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

constexpr std::size_t kInputBlock = 1 << 18;

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> raw, std::string name)
      : raw_(std::move(raw)), name_(std::move(name)) {
    std::memset(&zs_, 0, sizeof(zs_));
    if (inflateInit2(&zs_, 15 + 32) != Z_OK) throw Error("cannot initialise zlib");
    in_.resize(kInputBlock);
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  std::size_t read(char* buf, std::size_t n) override {
    if (done_) return 0;
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0) {
        const std::size_t got = raw_->read(in_.data(), in_.size());
        if (got == 0) {
          if (!stream_ended_) truncated_ = true;
          done_ = true;
          break;
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(got);
        if (stream_ended_) {
          // Another gzip member follows (concatenated .gz files).
          inflateReset(&zs_);
          stream_ended_ = false;
        }
      }
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_ended_ = true;
        if (zs_.avail_in > 0) {
          inflateReset(&zs_);
          stream_ended_ = false;
        }
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input
      if (rc != Z_OK) {
        throw Error(fmt::format("'{}' is not valid gzip data ({})", name_,
                                zs_.msg ? zs_.msg : "corrupt stream"),
                    "the file may be damaged or only partly copied");
      }
    }
    return n - zs_.avail_out;
  }
  bool truncated() const override { return truncated_; }
  const char* encoding() const override { return "gzip"; }
  std::uint64_t size_hint() const override { return raw_->size_hint(); }

 private:
  std::unique_ptr<ByteSource> raw_;
  std::string name_;
  z_stream zs_;
  std::vector<char> in_;
  bool done_ = false;
  bool stream_ended_ = false;
  bool truncated_ = false;
};

class ZstdSource : public ByteSource {
 public:
  ZstdSource(std::unique_ptr<ByteSource> raw, std::string name)
      : raw_(std::move(raw)), name_(std::move(name)) {
    ctx_ = ZSTD_createDCtx();
    if (!ctx_) throw Error("cannot initialise zstd");
    in_.resize(ZSTD_DStreamInSize());
  }
  ~ZstdSource() override { ZSTD_freeDCtx(ctx_); }
  std::size_t read(char* buf, std::size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos < out.size && !done_) {
      if (input_.pos == input_.size) {
        const std::size_t got = raw_->read(in_.data(), in_.size());
        if (got == 0) {
          if (last_ != 0) truncated_ = true;
          done_ = true;
          break;
        }
        input_ = ZSTD_inBuffer{in_.data(), got, 0};
      }
      const std::size_t rc = ZSTD_decompressStream(ctx_, &out, &input_);
      if (ZSTD_isError(rc)) {
        throw Error(fmt::format("'{}' is not valid zstd data ({})", name_, ZSTD_getErrorName(rc)),
                    "the file may be damaged or only partly copied");
      }
      last_ = rc;
    }
    return out.pos;
  }
  bool truncated() const override { return truncated_; }
  const char* encoding() const override { return "zstd"; }
  std::uint64_t size_hint() const override { return raw_->size_hint(); }

 private:
  std::unique_ptr<ByteSource> raw_;
  std::string name_;
  ZSTD_DCtx* ctx_ = nullptr;
  std::vector<char> in_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  std::size_t last_ = 0;
  bool done_ = false;
  bool truncated_ = false;
};

std::unique_ptr<ByteSource> wrap(std::unique_ptr<ByteSource> raw, const std::string& name) {
  char magic[4];
  std::size_t have = 0;
  while (have < sizeof(magic)) {
    const std::size_t got = raw->read(magic + have, sizeof(magic) - have);
    if (got == 0) break;
    have += got;
  }
  auto prefixed = std::make_unique<PrefixSource>(std::move(raw), std::string(magic, have));
  const auto* m = reinterpret_cast<const unsigned char*>(magic);
  if (have >= 2 && m[0] == 0x1f && m[1] == 0x8b)
    return std::make_unique<GzipSource>(std::move(prefixed), name);
  if (have >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
    return std::make_unique<ZstdSource>(std::move(prefixed), name);
  return prefixed;
}

}  // namespace

std::unique_ptr<ByteSource> open_source(const std::string& path) {
  if (path == "-")
    return wrap(std::make_unique<FdSource>(STDIN_FILENO, false, "stdin", 0), "stdin");
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
  return wrap(std::make_unique<FdSource>(fd, true, path, size), path);
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
  return wrap(std::make_unique<MemorySource>(bytes), "memory");
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
