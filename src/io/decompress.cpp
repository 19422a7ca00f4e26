// gzip through ISA-L's inflate (Debian's libisal: igzip, 2-3x zlib's speed on the same
// stream), zstd through libzstd, and the read-ahead thread.
#include "io/decompress.hpp"

#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "mfu/error.hpp"

namespace mfu::detail {
namespace {

constexpr std::size_t kInputBlock = 1 << 18;

const char* isal_error(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "corrupt stream";
  }
}

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> raw, std::string name)
      : raw_(std::move(raw)), name_(std::move(name)), in_(kInputBlock) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;  // parse the gzip header, check the trailer's CRC
  }
  std::size_t read(char* buf, std::size_t n) override {
    if (done_) return 0;
    state_.next_out = reinterpret_cast<std::uint8_t*>(buf);
    state_.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(n, 1u << 30));
    while (state_.avail_out > 0) {
      if (state_.avail_in == 0 && !input_ended_) {
        const std::size_t got = fill_input();
        input_ended_ = got == 0;
        state_.next_in = reinterpret_cast<std::uint8_t*>(in_.data());
        state_.avail_in = static_cast<std::uint32_t>(got);
      }
      if (state_.block_state == ISAL_BLOCK_FINISH) {
        if (state_.avail_in == 0) {  // the input ended with a whole member
          done_ = true;
          break;
        }
        next_member();
      }
      const std::uint32_t room = state_.avail_out;
      const int rc = isal_inflate(&state_);
      if (rc < 0)
        throw Error(fmt::format("'{}' is not valid gzip data ({})", name_, isal_error(rc)),
                    "the file may be damaged or only partly copied");
      // With the input spent, a call that gives nothing more has given all it holds (ISA-L
      // keeps decoded bytes back when the output is small): the stream was cut off. (Its
      // table look-up may leave the last symbol or two before the cut undecoded, where zlib,
      // decoding bit by bit, gives them: at most a few hundred bytes of a cut-off file.)
      if (input_ended_ && state_.avail_in == 0 && state_.avail_out == room &&
          state_.block_state != ISAL_BLOCK_FINISH) {
        truncated_ = true;
        done_ = true;
        break;
      }
    }
    return n - state_.avail_out;
  }
  bool truncated() const override { return truncated_; }
  const char* encoding() const override { return "gzip"; }
  std::uint64_t size_hint() const override { return raw_->size_hint(); }

 private:
  /// Reads raw bytes until the input block is full or the raw source ends (a pipe gives a few
  /// KiB a read: whole blocks mean fewer, longer calls into the inflater).
  std::size_t fill_input() { return read_fully(*raw_, in_.data(), in_.size()); }

  /// Another gzip member follows a finished one (concatenated .gz files).
  void next_member() {
    std::uint8_t* next_in = state_.next_in;
    const std::uint32_t avail_in = state_.avail_in;
    std::uint8_t* next_out = state_.next_out;
    const std::uint32_t avail_out = state_.avail_out;
    isal_inflate_reset(&state_);
    state_.crc_flag = ISAL_GZIP;
    state_.next_in = next_in;
    state_.avail_in = avail_in;
    state_.next_out = next_out;
    state_.avail_out = avail_out;
  }

  std::unique_ptr<ByteSource> raw_;
  std::string name_;
  std::vector<char> in_;
  inflate_state state_{};
  bool input_ended_ = false;
  bool done_ = false;
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

/// Reads `inner` on a thread of its own into a queue of blocks (see read_ahead).
class ReadAheadSource : public ByteSource {
 public:
  explicit ReadAheadSource(std::unique_ptr<ByteSource> inner)
      : inner_(std::move(inner)), encoding_(inner_->encoding()), size_(inner_->size_hint()) {
    thread_ = std::thread([this] { produce(); });
  }
  ~ReadAheadSource() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ReadAheadSource(const ReadAheadSource&) = delete;
  ReadAheadSource& operator=(const ReadAheadSource&) = delete;

  std::size_t read(char* buf, std::size_t n) override {
    std::size_t copied = 0;
    while (copied < n) {
      if (pos_ < current_.size()) {
        const std::size_t take = std::min(n - copied, current_.size() - pos_);
        std::copy_n(current_.data() + pos_, take, buf + copied);
        pos_ += take;
        copied += take;
        continue;
      }
      if (!next_block()) {
        // An error is thrown once the bytes before it are handed over.
        if (copied == 0 && error_) std::rethrow_exception(error_);
        break;
      }
    }
    return copied;
  }
  bool truncated() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return truncated_;
  }
  const char* encoding() const override { return encoding_; }
  std::uint64_t size_hint() const override { return size_; }

 private:
  // 1 MiB blocks, 4 ahead (a judgement: a block is a few ms of parsing, and 4 MiB ahead keeps
  // both threads busy through a slow stretch of either without holding much).
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  static constexpr std::size_t kAhead = 4;

  /// Takes the next filled block; false at the end or at the reader's error (error_).
  bool next_block() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !ready_.empty() || ended_; });
    if (ready_.empty()) return false;
    spare_.push_back(std::move(current_));
    current_ = std::move(ready_.front());
    ready_.pop_front();
    pos_ = 0;
    lock.unlock();
    changed_.notify_all();
    return true;
  }

  void produce() {
    try {
      for (;;) {
        std::vector<char> block;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          changed_.wait(lock, [this] { return ready_.size() < kAhead || stop_; });
          if (stop_) return;
          if (!spare_.empty()) {
            block = std::move(spare_.back());
            spare_.pop_back();
          }
        }
        block.resize(kBlock);
        std::size_t have = 0;
        std::exception_ptr error;
        try {
          // Not read_fully: the bytes read before an error must be kept.
          while (have < kBlock) {
            const std::size_t got = inner_->read(block.data() + have, kBlock - have);
            if (got == 0) break;
            have += got;
          }
        } catch (...) {
          error = std::current_exception();  // after the bytes read before it
        }
        block.resize(have);
        std::lock_guard<std::mutex> lock(mutex_);
        if (have > 0) ready_.push_back(std::move(block));
        if (error) {
          error_ = error;
          ended_ = true;
        } else if (have < kBlock) {
          ended_ = true;
          truncated_ = inner_->truncated();
        }
        changed_.notify_all();
        if (ended_) return;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      ended_ = true;
      changed_.notify_all();
    }
  }

  std::unique_ptr<ByteSource> inner_;  // read by the thread alone
  const char* encoding_;
  std::uint64_t size_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<char>> ready_;   // filled blocks, in order
  std::vector<std::vector<char>> spare_;  // blocks to fill again
  bool ended_ = false, stop_ = false, truncated_ = false;
  std::exception_ptr error_;
  std::vector<char> current_;  // the block being read (the reader's alone)
  std::size_t pos_ = 0;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace

std::unique_ptr<ByteSource> gzip_source(std::unique_ptr<ByteSource> raw, std::string name) {
  return std::make_unique<GzipSource>(std::move(raw), std::move(name));
}

std::unique_ptr<ByteSource> zstd_source(std::unique_ptr<ByteSource> raw, std::string name) {
  return std::make_unique<ZstdSource>(std::move(raw), std::move(name));
}

std::unique_ptr<ByteSource> read_ahead(std::unique_ptr<ByteSource> inner) {
  return std::make_unique<ReadAheadSource>(std::move(inner));
}

}  // namespace mfu::detail
