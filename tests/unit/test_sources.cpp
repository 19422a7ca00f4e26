// Compressed and oddly shaped inputs: gzip, zstd, truncated streams, long lines, stdin-like.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "gzip_bytes.hpp"
#include "ingest/chunked.hpp"
#include "io/line_reader.hpp"
#include "io/source.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

std::string gzip(const std::string& in) {
  return test::gzip_bytes(in);
}

std::string zstd(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3));
  return out;
}

std::string native_lines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "{\"step\":" + std::to_string(i) + ",\"time_s\":0.5}\n";
  return s;
}

TEST(Sources, GzipAndZstdAreDetectedByContentNotName) {
  const std::string text = native_lines(1000);
  const mfu::Run g = ingest_text(gzip(text), "no_extension");
  EXPECT_EQ(g.iterations.size(), 1000u);
  EXPECT_FALSE(g.truncated);
  const mfu::Run z = ingest_text(zstd(text), "plain.log");
  EXPECT_EQ(z.iterations.size(), 1000u);
}

TEST(Sources, ConcatenatedGzipMembersAreRead) {
  const std::string a = gzip(native_lines(3));
  const std::string b = gzip("{\"step\":4,\"time_s\":0.5}\n");
  EXPECT_EQ(ingest_text(a + b, "cat.gz").iterations.size(), 4u);
}

TEST(Sources, TruncatedCompressedStreamsGiveAPartialRunThatSaysSo) {
  const std::string text = native_lines(20000);
  for (const std::string& packed : {gzip(text), zstd(text)}) {
    const mfu::Run r = ingest_text(packed.substr(0, packed.size() / 2), "cut");
    EXPECT_TRUE(r.truncated);
    EXPECT_GT(r.iterations.size(), 100u);
    EXPECT_LT(r.iterations.size(), 20000u);
    bool said = false;
    for (const auto& d : r.diagnostics)
      said = said || d.message.find("cut off") != std::string::npos;
    EXPECT_TRUE(said);
  }
}

TEST(Sources, CorruptGzipIsAnErrorNamingTheFile) {
  std::string packed = gzip(native_lines(100));
  for (std::size_t i = 20; i < packed.size() - 8; i += 7)
    packed[i] = static_cast<char>(packed[i] ^ 0x5a);
  EXPECT_THROW((void)ingest_text(packed, "bad.gz"), Error);
}

TEST(LineReader, OversizedLinesAreSkippedWithoutHoldingThem) {
  std::string text = "{\"step\":1,\"time_s\":0.5}\n" + std::string(3u << 20, 'x') +
                     "\n{\"step\":2,\"time_s\":0.5}\n";
  auto src = detail::memory_source(text);
  detail::LineReader reader(*src, 1u << 20);
  std::string_view line;
  std::vector<std::string> lines;
  while (reader.next(line)) lines.emplace_back(line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(reader.oversized_lines(), 1u);
  EXPECT_EQ(reader.first_oversized_line(), 2u);
  EXPECT_EQ(reader.line_number(), 3u);
}

TEST(LineReader, CarriageReturnsSplitSegmentsWithTheSameLineNumber) {
  auto src = detail::memory_source("a\r\nb\rc\r\nd");
  detail::LineReader reader(*src);
  std::string_view line;
  std::vector<std::pair<std::string, std::uint64_t>> got;
  while (reader.next(line)) got.emplace_back(std::string(line), reader.line_number());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], (std::pair<std::string, std::uint64_t>{"a", 1}));
  EXPECT_EQ(got[1], (std::pair<std::string, std::uint64_t>{"b", 2}));
  EXPECT_EQ(got[2], (std::pair<std::string, std::uint64_t>{"c", 2}));
  EXPECT_EQ(got[3], (std::pair<std::string, std::uint64_t>{"d", 3}));
  EXPECT_TRUE(reader.unterminated_last_line());
}

/// Hands out at most `chunk` bytes a read, with no size hint: the reader refills (and moves
/// its buffer) many times within a text, as it does on a pipe.
class TrickleSource : public detail::ByteSource {
 public:
  TrickleSource(std::string text, std::size_t chunk) : text_(std::move(text)), chunk_(chunk) {}
  std::size_t read(char* buf, std::size_t n) override {
    const std::size_t k = std::min({n, chunk_, text_.size() - pos_});
    std::copy_n(text_.data() + pos_, k, buf);
    pos_ += k;
    return k;
  }

 private:
  std::string text_;
  std::size_t chunk_;
  std::size_t pos_ = 0;
};

struct Segment {
  std::string text;
  std::uint64_t line = 0;
  bool escape = false;  ///< the physical line holds an escape byte
  bool operator==(const Segment&) const = default;
};

/// The segments a reader must return, computed the plain way: split at '\n', drop one
/// trailing '\r', split the rest at '\r' (an empty segment before a '\r' is dropped; the
/// last one is kept, empty or not).
std::vector<Segment> reference_segments(const std::string& text) {
  std::vector<Segment> out;
  std::uint64_t number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const bool escape = line.find('\x1b') != std::string::npos;
    if (line.find('\r') == std::string::npos) {
      out.push_back({line, number, escape});
      continue;
    }
    for (std::size_t from = 0;;) {
      const std::size_t cr = line.find('\r', from);
      const std::string seg = line.substr(from, cr == std::string::npos ? cr : cr - from);
      if (!seg.empty() || cr == std::string::npos) out.push_back({seg, number, escape});
      if (cr == std::string::npos) break;
      from = cr + 1;
    }
  }
  return out;
}

// The reader finds carriage returns and escape bytes with one search kept across lines
// (LineReader::NextByte), not a search a line. Generated texts put them anywhere: several on a
// line, at its start and end, across the reader's refills, none for long stretches; every
// segment, line number and escape flag must be what the plain splitter above says.
TEST(LineReader, CarriageReturnsAndEscapesFoundOnceMatchAPlainSplit) {
  std::mt19937 rng(17);
  const char alphabet[] = {'a', 'b', '{', '"', '1', ' ', '\r', '\x1b', '\n'};
  for (int trial = 0; trial < 300; ++trial) {
    // Rare special bytes in some texts, frequent in others.
    const int rare = std::uniform_int_distribution<int>(2, 400)(rng);
    std::string text;
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 3000)(rng);
    for (std::size_t i = 0; i < n; ++i) {
      const int pick = std::uniform_int_distribution<int>(0, rare)(rng);
      text += pick < 3 ? alphabet[6 + pick] : alphabet[static_cast<std::size_t>(pick) % 6];
    }
    const std::size_t chunk = std::uniform_int_distribution<std::size_t>(1, 700)(rng);
    TrickleSource src(text, chunk);
    detail::LineReader reader(src);
    std::vector<Segment> got;
    std::string_view line;
    while (reader.next(line))
      got.push_back({std::string(line), reader.line_number(), reader.may_have_escape()});
    ASSERT_EQ(got, reference_segments(text)) << "trial " << trial << ", reads of " << chunk;
  }
}

TEST(Inputs, ADirectoryOfPerRankLogsIsMergedByStep) {
  const auto dir = std::filesystem::temp_directory_path() / "mfu-test-ranks";
  std::filesystem::remove_all(dir);
  std::string r0, r1;
  for (int i = 1; i <= 5; ++i) {
    r0 += "{\"step\":" + std::to_string(i) + ",\"time_s\":0.50}\n";
    r1 += "{\"step\":" + std::to_string(i) + ",\"time_s\":0.55}\n";
  }
  test::write_file(dir / "rank1.jsonl", r1);
  test::write_file(dir / "rank0.jsonl", r0);
  const mfu::Run r = ingest({dir.string()});
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_DOUBLE_EQ(r.iterations[2].time_s, 0.55);  // the slowest rank sets the pace
  EXPECT_EQ(r.inputs.size(), 2u);
  std::filesystem::remove_all(dir);
}

TEST(Inputs, PiecesOfARestartedJobAreOrderedByContentNotName) {
  const auto dir = std::filesystem::temp_directory_path() / "mfu-test-pieces";
  std::filesystem::remove_all(dir);
  test::write_file(dir / "a_second.jsonl",
                   "{\"step\":6,\"time_s\":0.5,\"timestamp\":2000}\n{\"step\":7,\"time_s\":0.5,"
                   "\"timestamp\":2000.5}\n");
  test::write_file(dir / "b_first.jsonl",
                   "{\"step\":1,\"time_s\":0.5,\"timestamp\":1000}\n{\"step\":2,\"time_s\":0.5,"
                   "\"timestamp\":1000.5}\n");
  const mfu::Run r = ingest({dir.string()});
  ASSERT_EQ(r.iterations.size(), 4u);
  EXPECT_EQ(r.iterations[0].step, 1);
  EXPECT_EQ(r.iterations[3].step, 7);
  std::filesystem::remove_all(dir);
}

// Several files are read on several threads, each taking the next file as it finishes one;
// when some cannot be read, the error is the first such file's in order, as a serial read
// meets it, on any number of threads and wherever the bad files stand (seeded: 40 layouts of
// 12 files, 1 to 3 of them bad). The good files read as they do alone.
TEST(Inputs, OfSeveralFilesTheFirstBadOneInOrderIsTheError) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("mfu-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::mt19937 rng(21);
  for (int layout = 0; layout < 40; ++layout) {
    std::vector<std::string> files;
    std::vector<bool> bad(12, false);
    for (unsigned b = 0, n = 1 + rng() % 3; b < n; ++b) bad[rng() % 12] = true;
    std::size_t first_bad = 12;
    for (std::size_t i = 0; i < 12; ++i) {
      const fs::path p = dir / ("rank" + std::to_string(i) + ".jsonl");
      test::write_file(p, bad[i]
                              ? std::string("no record here\n")
                              : "{\"step\":1,\"time_s\":0.5,\"rank\":" + std::to_string(i) + "}\n");
      if (bad[i] && first_bad == 12) first_bad = i;
      files.push_back(p.string());
    }
    for (unsigned threads : {2u, 3u, 8u}) {
      IngestOptions o;
      o.threads = threads;
      try {
        (void)ingest(files, o);
        ADD_FAILURE() << "no error, layout " << layout;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("rank" + std::to_string(first_bad) + ".jsonl'"),
                  std::string::npos)
            << e.what() << " (layout " << layout << ", " << threads << " threads)";
      }
    }
  }
  fs::remove_all(dir);
}

TEST(Inputs, MissingFileIsAnErrorNamingIt) {
  try {
    (void)ingest({"/nonexistent/run.log"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/run.log"), std::string::npos);
  }
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

/// The same file parsed in one piece and in several must give the same run.
void expect_same_run(const Run& a, const Run& b) {
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (std::size_t i = 0; i < a.iterations.size(); ++i) {
    const Iteration x = a.iterations[i], y = b.iterations[i];
    ASSERT_EQ(x.step, y.step) << i;
    ASSERT_EQ(x.line, y.line) << i;
    ASSERT_EQ(x.count, y.count) << i;
    ASSERT_TRUE(x.time_s == y.time_s || (std::isnan(x.time_s) && std::isnan(y.time_s))) << i;
    ASSERT_TRUE(x.samples == y.samples || (std::isnan(x.samples) && std::isnan(y.samples))) << i;
    ASSERT_TRUE(x.tokens == y.tokens || (std::isnan(x.tokens) && std::isnan(y.tokens))) << i;
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      ASSERT_TRUE(x.phase[p] == y.phase[p] || (std::isnan(x.phase[p]) && std::isnan(y.phase[p])))
          << i;
  }
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].line, b.events[i].line);
    EXPECT_EQ(a.events[i].kind, b.events[i].kind);
  }
  EXPECT_EQ(a.malformed_lines, b.malformed_lines);
  EXPECT_EQ(a.lines_read, b.lines_read);
  EXPECT_EQ(a.fields, b.fields);
  for (const auto& [k, v] : a.meta.all()) {
    ASSERT_TRUE(b.meta.has(k)) << k;
    EXPECT_EQ(b.meta.all().at(k).source, v.source) << k;
  }
  // The same warnings on the same lines, quoting the same "file:N" (a conflict between two
  // pieces is found when they are merged: its warning comes after the later piece's own).
  const auto warnings = [](const Run& r) {
    std::vector<std::pair<std::uint64_t, std::string>> w;
    for (const Diagnostic& d : r.diagnostics) w.emplace_back(d.line, d.message);
    std::sort(w.begin(), w.end());
    return w;
  };
  EXPECT_EQ(warnings(a), warnings(b));
}

TEST(Sources, ParallelPiecesGiveTheSameRunAsOnePiece) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("mfu-pieces-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Native: a meta line, records, a malformed line and an event in the middle.
  std::string native = R"({"type":"meta","gpu":"h100-sxm"})"
                       "\n";
  for (int i = 1; i <= 3000; ++i) {
    native += R"({"step":)" + std::to_string(i) +
              R"(,"time_s":0.5,"tokens":1000,"phases":{"comm_ms":)" + std::to_string(i % 7) +
              "}}\n";
    if (i == 1500) native += "{\"step\": 1500.5, cut\n";
    if (i == 2000)
      native += R"({"type":"event","kind":"checkpoint","step":2000,"duration_s":3})"
                "\n";
    // Metadata in later pieces: a value that contradicts one of the first piece (a warning
    // quoting both lines, made when the pieces are merged), and a first value contradicted
    // near the end of the file (a warning made inside the last piece, before its lines are
    // known: the lines it quotes are moved with the piece's).
    // (dtype: text metadata, whose source is kept printable.)
    for (const auto& [after, line] :
         {std::pair<int, const char*>{100, R"({"type":"meta","seq_len":4096})"},
          {2400, R"({"type":"meta","seq_len":2048})"},
          {2700, R"({"type":"meta","dtype":"bf16"})"},
          {2900, R"({"type":"meta","gpus":16})"},
          {2950, R"({"type":"meta","gpus":32})"}})
      if (i == after) native += std::string(line) + "\n";
  }
  // Megatron: the bundled example's lines, repeated with growing iteration numbers so that
  // pieces cut between iteration lines and their timer blocks.
  const std::string example =
      test::read_file(fs::path(MFU_SOURCE_DIR) / "examples/megatron-deepspeed_gpt3-125m_8gpu.log");
  // The native file also under a name with a control character (printed escaped in sources).
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"native.jsonl", native},
                                   std::pair<std::string, std::string>{"native\x01.jsonl", native},
                                   std::pair<std::string, std::string>{"megatron.log", example}}) {
    const fs::path p = dir / name;
    test::write_file(p, text);
    IngestOptions one;
    one.threads = 1;
    const mfu::Run a = ingest({p.string()}, one);
    EXPECT_GT(a.iterations.size(), 10u);
    for (unsigned threads : {2u, 3u, 5u}) {  // cuts at different lines
      IngestOptions many;
      many.threads = threads;
      many.parallel_min_bytes = 1;  // cut even this small file
      const mfu::Run b = ingest({p.string()}, many);
      SCOPED_TRACE(name + " threads " + std::to_string(threads));
      expect_same_run(a, b);
    }
  }
  fs::remove_all(dir);
}

// Where the pieces of a file start before each cut moves to a record start, computed by hand:
// each round of pieces (one per thread) weighs a third of the round before, so the last pieces,
// whose lengths decide how far apart the threads finish, are the small ones.
TEST(Sources, ParallelPiecesShrinkRoundByRound) {
  using Starts = std::vector<std::uint64_t>;
  // 2 threads, 4 pieces: weights 3, 3, 1, 1 of 8.
  EXPECT_EQ(detail::planned_piece_starts(8000, 4, 2), (Starts{0, 3000, 6000, 7000}));
  // 2 threads, 3 pieces: weights 3, 3, 1 of 7; 3000 / 7 = 428.6 and 6000 / 7 = 857.1.
  EXPECT_EQ(detail::planned_piece_starts(1000, 3, 2), (Starts{0, 428, 857}));
  // One round: equal pieces.
  EXPECT_EQ(detail::planned_piece_starts(1000, 4, 4), (Starts{0, 250, 500, 750}));
  EXPECT_EQ(detail::planned_piece_starts(1000, 1, 2), (Starts{0}));
  // 4 threads, 8 pieces: weights 3 (four times), then 1 (four times), of 16.
  EXPECT_EQ(detail::planned_piece_starts(1600, 8, 4),
            (Starts{0, 300, 600, 900, 1200, 1300, 1400, 1500}));
  // A size whose product with a weight sum passes 2^64 in 64-bit arithmetic: 2^62 * 7 / 8.
  EXPECT_EQ(detail::planned_piece_starts(std::uint64_t{1} << 62, 4, 2)[3],
            (std::uint64_t{1} << 62) / 8 * 7);
  // Many rounds (3^99 is past 2^64): the starts still rise from 0 and stay within the file.
  const Starts many = detail::planned_piece_starts(1000, 100, 1);
  ASSERT_EQ(many.size(), 100u);
  EXPECT_EQ(many.front(), 0u);
  EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
  EXPECT_LE(many.back(), 1000u);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

TEST(Sources, LogFollowerReadsOnlyWhatWasAppended) {
  namespace fs = std::filesystem;
  const fs::path p =
      fs::temp_directory_path() / ("mfu-follower-" + std::to_string(::getpid()) + ".jsonl");
  auto rec = [](int step) {
    return R"({"step":)" + std::to_string(step) +
           R"(,"time_s":0.5})"
           "\n";
  };
  test::write_file(p, R"({"type":"meta","gpus":8})"
                      "\n" +
                          rec(1) + rec(2));
  LogFollower f(p.string());
  EXPECT_TRUE(f.poll());
  EXPECT_EQ(f.snapshot().iterations.size(), 2u);
  EXPECT_FALSE(f.poll());  // nothing new
  {
    std::ofstream out(p, std::ios::app);
    out << rec(3) << R"({"step":4,"ti)";  // a line still being written
  }
  EXPECT_TRUE(f.poll());
  const mfu::Run mid = f.snapshot();
  EXPECT_EQ(mid.iterations.size(), 3u);
  const std::uint64_t before = f.offset();
  {
    std::ofstream out(p, std::ios::app);
    out << R"(me_s":0.5})"
           "\n";
  }
  EXPECT_TRUE(f.poll());
  const mfu::Run done = f.snapshot();
  EXPECT_EQ(done.iterations.size(), 4u);
  EXPECT_GT(f.offset(), before);
  EXPECT_EQ(done.malformed_lines, 0u);
  // Line numbers continue across polls: step 4 is line 5 (after the meta line).
  EXPECT_EQ(done.iterations[3].line, 5u);
  {
    std::ofstream out(p, std::ios::app);
    out << "progress 10%\rprogress 20%\r" << rec(5);  // \r segments, as a terminal redraws
  }
  EXPECT_TRUE(f.poll());
  const mfu::Run more = f.snapshot();
  ASSERT_EQ(more.iterations.size(), 5u);
  EXPECT_EQ(more.iterations[4].step, 5);
  EXPECT_EQ(more.iterations[4].line, 6u);
  // Rewritten shorter (log rotation): read again from the start.
  test::write_file(p, R"({"type":"meta","gpus":8})"
                      "\n" +
                          rec(1));
  EXPECT_TRUE(f.poll());
  EXPECT_EQ(f.snapshot().iterations.size(), 1u);
  fs::remove(p);
}

}  // namespace
}  // namespace mfu
