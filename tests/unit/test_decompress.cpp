// gzip through ISA-L against zlib, the reference inflater: the same bytes out of every stream,
// whole, cut off at any point (truncated, with the bytes before the cut), concatenated, at every
// compression level; and the read-ahead thread gives the same bytes, errors and truncation as
// reading in place.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gzip_bytes.hpp"
#include "io/decompress.hpp"
#include "io/source.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu::detail {
namespace {

std::string deflate_gzip(const std::string& in, int level) {
  return test::gzip_bytes(in, level);
}

/// The reference: zlib inflates the members of `packed` until its end or an error; `complete`
/// says whether the last member ended.
std::string zlib_inflate(const std::string& packed, bool* complete) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 32);
  std::string out;
  char buf[4096];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  zs.avail_in = static_cast<uInt>(packed.size());
  *complete = false;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_STREAM_END) {
      *complete = true;
      if (zs.avail_in == 0) break;
      inflateReset(&zs);
      *complete = false;
      continue;
    }
    if (rc != Z_OK) break;  // out of input (Z_BUF_ERROR) or bad data
  }
  inflateEnd(&zs);
  return out;
}

std::string read_through(ByteSource& src) {
  std::string out;
  char buf[3001];  // an odd size: reads end anywhere in the stream
  for (std::size_t got; (got = src.read(buf, sizeof buf)) > 0;) out.append(buf, got);
  return out;
}

/// Text like a log's and bytes that do not compress.
std::string payload(std::mt19937_64& rng, std::size_t n) {
  std::string s;
  while (s.size() < n) {
    if (rng() % 4 == 0) {
      for (int k = 0; k < 64; ++k) s.push_back(static_cast<char>(rng()));
    } else {
      s += "{\"step\":" + std::to_string(rng() % 100000) + ",\"time_s\":0." +
           std::to_string(rng() % 1000000) + "}\n";
    }
  }
  s.resize(n);
  return s;
}

/// A source that yields `data` and then throws, or ends cut off.
class Scripted : public ByteSource {
 public:
  Scripted(std::string data, bool fail, bool cut)
      : data_(std::move(data)), fail_(fail), cut_(cut) {}
  std::size_t read(char* buf, std::size_t n) override {
    if (pos_ == data_.size()) {
      if (fail_) throw Error("the disk went away");
      return 0;
    }
    const std::size_t take = std::min(n, std::min<std::size_t>(777, data_.size() - pos_));
    data_.copy(buf, take, pos_);
    pos_ += take;
    return take;
  }
  bool truncated() const override { return cut_; }
  const char* encoding() const override { return "gzip"; }

 private:
  std::string data_;
  std::size_t pos_ = 0;
  bool fail_, cut_;
};

TEST(Decompress, IsalGivesZlibsBytesWholeCutAndConcatenated) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = trial == 0 ? 0 : 1 + rng() % (trial % 4 == 0 ? 400000 : 20000);
    std::string packed = deflate_gzip(payload(rng, n), static_cast<int>(rng() % 10));
    if (trial % 3 == 1) {
      const std::size_t more = 1 + rng() % 5000;      // drawn first: the same data whatever the
      packed += deflate_gzip(payload(rng, more), 6);  // compiler's argument order
    }
    // Whole, and cut off at a random point.
    for (const std::size_t cut : {packed.size(), static_cast<std::size_t>(rng() % packed.size())}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(cut) + " of " +
                   std::to_string(packed.size()) + " bytes");
      const std::string bytes = packed.substr(0, cut);
      bool complete = false;
      const std::string want = zlib_inflate(bytes, &complete);
      auto src = gzip_source(std::make_unique<Scripted>(bytes, false, false), "t.gz");
      std::string got;
      try {
        got = read_through(*src);
      } catch (const Error& e) {
        // A cut inside the header: zlib gives nothing either.
        EXPECT_TRUE(want.empty()) << e.what();
        continue;
      }
      if (complete) {
        EXPECT_EQ(got.size(), want.size());
        EXPECT_TRUE(got == want)
            << "first difference at byte "
            << std::mismatch(got.begin(), got.end(), want.begin(), want.end()).first - got.begin();
      } else {
        // Cut off, the bytes before the cut, but for the last symbol or two when their codes
        // end too close to the cut for ISA-L's table look-up (zlib decodes bit by bit): a
        // symbol gives at most 258 bytes (the longest match, RFC 1951 section 3.2.5). Seen: 1 byte
        // short, in 1 of 3,000 cuts.
        EXPECT_LE(got.size(), want.size());
        EXPECT_LE(want.size() - got.size(), 2u * 258u);
        EXPECT_TRUE(want.compare(0, got.size(), got) == 0) << "not a prefix of zlib's bytes";
      }
      EXPECT_EQ(src->truncated(), !complete);
    }
  }
}

TEST(Decompress, CorruptDataIsAnErrorNamingTheInput) {
  std::mt19937_64 rng(5);
  std::string packed = deflate_gzip(payload(rng, 100000), 6);
  for (std::size_t i = 20; i < 60; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
  auto src = gzip_source(std::make_unique<Scripted>(packed, false, false), "broken.gz");
  try {
    (void)read_through(*src);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'broken.gz' is not valid gzip data"), std::string::npos)
        << e.what();
  }
}

TEST(Decompress, ReadAheadGivesTheSameBytesErrorsAndTruncation) {
  std::mt19937_64 rng(9);
  const std::string data = payload(rng, 5'300'001);  // five 1 MiB blocks and a bit
  {
    auto src = read_ahead(std::make_unique<Scripted>(data, false, true));
    const std::string got = read_through(*src);
    EXPECT_EQ(got.size(), data.size());
    EXPECT_TRUE(got == data);
    EXPECT_TRUE(src->truncated());
    EXPECT_STREQ(src->encoding(), "gzip");
  }
  {
    auto src = read_ahead(std::make_unique<Scripted>(data, true, false));
    std::string got;
    char buf[65536];
    try {
      for (std::size_t g; (g = src->read(buf, sizeof buf)) > 0;) got.append(buf, g);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "the disk went away");
    }
    EXPECT_EQ(got.size(), data.size());  // every byte before the error arrived
    EXPECT_TRUE(got == data);
  }
  {
    // A reader that stops early: the thread is stopped, nothing hangs.
    auto src = read_ahead(std::make_unique<Scripted>(data, false, false));
    char buf[10];
    EXPECT_EQ(src->read(buf, sizeof buf), 10u);
  }
}

// The whole path: a gzip file on disk is read ahead and gives the run its plain copy gives.
TEST(Decompress, AGzipFileReadsAsItsPlainCopy) {
  std::mt19937_64 rng(2);
  std::string text;
  for (int i = 1; i <= 20000; ++i)
    text +=
        "{\"step\":" + std::to_string(i) + ",\"time_s\":0.5" + std::to_string(rng() % 10) + "}\n";
  const auto dir =
      std::filesystem::temp_directory_path() / ("mfu-gz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run.jsonl", std::ios::binary) << text;
  std::ofstream(dir / "run.jsonl.gz", std::ios::binary) << deflate_gzip(text, 6);
  const mfu::Run plain = mfu::ingest({(dir / "run.jsonl").string()});
  const mfu::Run packed = mfu::ingest({(dir / "run.jsonl.gz").string()});
  ASSERT_EQ(plain.iterations.size(), 20000u);
  ASSERT_EQ(packed.iterations.size(), plain.iterations.size());
  for (std::size_t i = 0; i < plain.iterations.size(); i += 997)
    EXPECT_EQ(packed.iterations[i].time_s, plain.iterations[i].time_s);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mfu::detail
