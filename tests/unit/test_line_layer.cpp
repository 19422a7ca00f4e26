// The line layer: prefix peeling (io/line_prefix.hpp's grammar) and the same run whatever
// prefix a launcher or logger put before each line of a real excerpt.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <sstream>

#include "io/line_prefix.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

using detail::LinePeeler;
using detail::peel_prefixes;

struct PeelCase {
  const char* line;
  const char* body;
  std::int32_t rank;
  double timestamp_s;  // NaN: none
  const char* host;
};

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// Unix times by hand (Python: calendar.timegm): 2023-03-22 10:01:02 UTC = 1679479262;
// 2024-03-30 20:02:40+02:00 = 18:02:40 UTC = 1711821760; 2023-12-01 12:00:00 = 1701432000;
// glog "I1201 12:00:00" has no year: 1970-12-01 12:00:00 = 28900800.
const PeelCase kPeelCases[] = {
    {"2023-03-22 10:01:02 iter 2920: loss 2.1", "iter 2920: loss 2.1", -1, 1679479262, ""},
    {"2023-03-22 10:01:02,500 - INFO - step 3", "INFO - step 3", -1, 1679479262.5, ""},
    {"[2023-03-22 10:01:02,250] [INFO] [logging.py:96:log_dist] [Rank 0] step=10",
     "[INFO] [logging.py:96:log_dist] [Rank 0] step=10", -1, 1679479262.25, ""},
    {"2024-03-30T20:02:40+02:00 step 1", "step 1", -1, 1711821760, ""},
    {"2023-03-22T10:01:02.5Z | step 1", "| step 1", -1, 1679479262.5,
     ""},  // "|" kept: see nvidia-smi
    {"12/01/2023 12:00:00 - INFO - transformers.trainer - x", "INFO - transformers.trainer - x", -1,
     1701432000, ""},
    {"2023/12/01 12:00:00 loss", "loss", -1, 1701432000, ""},
    {"I1201 12:00:00.000000 140 train.py:12] step 1", "step 1", -1, 28900800, ""},
    {"[rank3]: iteration 5/ 10 |", "iteration 5/ 10 |", 3, kNone, ""},
    {"[default7]:[titan] 2025-01-01 step: 1", "[titan] 2025-01-01 step: 1", 7, kNone, ""},
    {"12: iter 1: loss 2.0", "iter 1: loss 2.0", 12, kNone, ""},
    {"[1,5]<stdout>: step 4", "step 4", 5, kNone, ""},
    {"[Rank 2] step=4", "step=4", 2, kNone, ""},
    {"rank=6 step 9", "step 9", 6, kNone, ""},
    {"rank 1: step 9", "step 9", 1, kNone, ""},
    {"stdout: {'loss': 1.5}", "{'loss': 1.5}", -1, kNone, ""},
    {"(TaskRunner pid=2231) step:1 - loss:0.5", "step:1 - loss:0.5", -1, kNone, ""},
    {"(WorkerDict pid=77, ip=10.0.0.2) x", "x", -1, kNone, ""},
    {"worker-0: [2023-03-22 10:01:02,000] [INFO] hi", "[INFO] hi", -1, 1679479262, "worker-0: "},
    {"> iter 10: loss 3.0", "iter 10: loss 3.0", -1, kNone, ""},
    {">>   iter 10: loss 3.0", "iter 10: loss 3.0", -1, kNone, ""},
    {"    iter 10: loss 3.0", "iter 10: loss 3.0", -1, kNone, ""},
    {"node017: 3: [rank3]: step 1", "step 1", 3, kNone, "node017: "},
    {"10.0.0.7: iter 1: loss 2.0", "iter 1: loss 2.0", -1, kNone, "10.0.0.7: "},
    {"[0434:5]:11/01/2024 11:05:18 [INFO|DP=0]: x", "[INFO|DP=0]: x", 5, 1730459118, ""},
    {"[trainer0|2]:Step 3 | loss:2.1", "Step 3 | loss:2.1", 2, kNone, ""},
    // srun's node label around torchrun's local rank: node 1, local 3 (renumbered later).
    {"1: [default3]:iter 1: loss 2.0", "iter 1: loss 2.0", detail::kNodeRankStride + 3, kNone, ""},
    {"0: [rank3]:iter 1: loss 2.0", "iter 1: loss 2.0", 3, kNone, ""},  // a global rank tag
    {"[INFO|2024-11-26 22:09:01] logging.py:157 >> {'loss': 2.2818, 'epoch': 0.29}",
     "{'loss': 2.2818, 'epoch': 0.29}", -1, 1732658941, ""},
    {"[WARNING|2024-11-26 22:07:06] logging.py:162 >> `ddp_find_unused_parameters` x",
     "`ddp_find_unused_parameters` x", -1, 1732658826, ""},
    // The launcher's tag for the write after a tqdm redraw ends the line: not the body's.
    {"[trainer0|0]:1|2|Loss: 2.7: 2/101 [00:38<31:17, 18.96s/it] [trainer0|0]:",
     "1|2|Loss: 2.7: 2/101 [00:38<31:17, 18.96s/it]", 0, kNone, ""},
    {"[default1]:5/9 [00:05<00:04, 1.00it/s][default1]:", "5/9 [00:05<00:04, 1.00it/s]", 1, kNone,
     ""},
    // Another rank's tag, or an unbracketed one, is text of the body.
    {"[default1]:5/9 [00:05<00:04, 1.00it/s][default2]:", "5/9 [00:05<00:04, 1.00it/s][default2]:",
     1, kNone, ""},
    {"3: ratio at rank 3:", "ratio at rank 3:", 3, kNone, ""},
};

TEST(PrefixGrammar, EachKindIsPeeledAndKept) {
  for (const auto& c : kPeelCases) {
    const auto p = peel_prefixes(c.line);
    EXPECT_EQ(p.body, c.body) << c.line;
    EXPECT_EQ(p.attrs.rank, c.rank) << c.line;
    if (std::isnan(c.timestamp_s)) {
      EXPECT_TRUE(std::isnan(p.attrs.timestamp_s)) << c.line;
    } else {
      EXPECT_NEAR(p.attrs.timestamp_s, c.timestamp_s, 1e-3) << c.line;
    }
    if (*c.host) {
      EXPECT_EQ(p.attrs.host, c.host) << c.line;
    }
  }
}

TEST(PrefixGrammar, AFormatsOwnTextIsNotPeeled) {
  // Each of these starts with text a prefix rule could mistake for its own.
  for (const char* line :
       {"iter 10: loss 2.3", "step: 10 loss: 2", "{'loss': 1.0, 'epoch': 0.1}",
        "Epoch 1: 100%|####| 10/10", "[titan] 2025-01-01 12:00:00,000 - root - INFO - step: 1",
        "train_loss: 2.0", "12:00:00 started", "[step3] x", "2024-01-01 12:00:00,1,0.33",
        "iteration        5/     10 | consumed samples: 40", ":::MLLOG {\"key\": \"x\"}",
        "1,0.33,3.5e13", "[INFO] x", "2024-01-01x", "1.5: ratio", "0.5.1: v"}) {
    const auto p = peel_prefixes(line);
    EXPECT_EQ(p.body, line) << line;
    EXPECT_EQ(p.attrs.prefixes, 0) << line;
  }
}

TEST(PrefixGrammar, AnsiCodesAndBomGoBeforePeeling) {
  LinePeeler peeler;
  const auto p = peeler.peel("\xEF\xBB\xBF\x1b[32m[rank1]:\x1b[0m step 3");
  EXPECT_EQ(p.body, "step 3");
  EXPECT_EQ(p.attrs.rank, 1);
}

TEST(PrefixGrammar, ATimestampOnItsOwnLineDatesTheNextLine) {
  // W&B's exported output.log: the time on one line, the text on the next.
  LinePeeler peeler;
  EXPECT_EQ(peeler.peel("2023-03-22T10:01:02Z").body, "");
  const auto p = peeler.peel("iter 1: loss 2.0, time 100.00ms");
  EXPECT_NEAR(p.attrs.timestamp_s, 1679479262, 1e-6);
  EXPECT_TRUE(std::isnan(peeler.peel("iter 2: loss 2.0").attrs.timestamp_s));  // lent once
}

// Two nodes under srun --label, four torchrun --tee local ranks each ("N: [defaultL]:"), nanoGPT
// lines, 20 steps; node 1's local rank 2 takes 1.3 s, the others 1.0 s. By hand: 8 ranks
// (global rank = node * 4 + local), the slowest is 1 * 4 + 2 = 6 and sets every step, each
// step 1.3 s, 26 s in all. Read by local rank alone, each "rank" would print every step twice.
TEST(PrefixGrammar, NodeLabelAndLocalRankGiveTheGlobalRank) {
  std::string text;
  for (int step = 1; step <= 20; ++step) {
    for (int node = 0; node < 2; ++node) {
      for (int local = 0; local < 4; ++local) {
        const double ms = node == 1 && local == 2 ? 1300 : 1000;
        text += fmt::format("{}: [default{}]:iter {}: loss 2.0, time {:.2f}ms, mfu 10.00%\n", node,
                            local, step, ms);
      }
    }
  }
  const mfu::Run run = ingest_text(text, "nodes.log");
  EXPECT_EQ(run.format, "nanogpt");
  ASSERT_EQ(run.iterations.size(), 20u);
  double total = 0;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) total += run.iterations[i].time_s;
  EXPECT_NEAR(total, 26.0, 1e-9);
  ASSERT_EQ(run.rank_streams.size(), 8u);
  for (const auto& r : run.rank_streams) {
    EXPECT_LT(r.rank, 8);
    EXPECT_EQ(r.slowest_steps, r.rank == 6 ? 20u : 0u) << r.rank;
  }
}

// ---------------------------------------------------------------------------------------------
// The matrix: every text excerpt x every prefix kind reads as the same run.

struct PrefixKind {
  const char* name;
  std::function<std::string(std::size_t line)> prefix;  // for line n (0-based)
  std::int32_t rank;                                    // the rank it tags, -1 none
  bool dated;                                           // it carries a timestamp
};

// Dated prefixes count seconds from this Unix time: the excerpt's own first timestamp when it
// has a dated one (a launcher's clock agrees with the log's), else 2024-05-01 00:00:00 UTC.
double g_epoch = 1714521600;

std::tm utc_at(std::size_t n) {
  const auto t = static_cast<std::time_t>(g_epoch) + static_cast<std::time_t>(n);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

std::string iso_time(std::size_t n) {
  const std::tm t = utc_at(n);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
}

std::vector<PrefixKind> prefix_kinds() {
  return {
      {"none", [](std::size_t) { return std::string(); }, -1, false},
      {"timestamp", [](std::size_t n) { return fmt::format("{} ", iso_time(n)); }, -1, true},
      {"bracketed timestamp,ms",
       [](std::size_t n) { return fmt::format("[{},125] ", iso_time(n)); }, -1, true},
      {"ISO 8601 T Z",
       [](std::size_t n) {
         std::string t = iso_time(n);
         t[10] = 'T';
         return fmt::format("{}Z ", t);
       },
       -1, true},
      {"month first",
       [](std::size_t n) {
         const std::tm t = utc_at(n);
         return fmt::format("{:02}/{:02}/{:04} {:02}:{:02}:{:02} - ", t.tm_mon + 1, t.tm_mday,
                            t.tm_year + 1900, t.tm_hour, t.tm_min, t.tm_sec);
       },
       -1, true},
      {"glog",
       [](std::size_t n) {
         const std::tm t = utc_at(n);
         return fmt::format("I{:02}{:02} {:02}:{:02}:{:02}.000000 4242 train.py:88] ", t.tm_mon + 1,
                            t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
       },
       -1, true},
      {"[rank3]:", [](std::size_t) { return std::string("[rank3]: "); }, 3, false},
      {"[default3]:", [](std::size_t) { return std::string("[default3]:"); }, 3, false},
      {"srun label", [](std::size_t) { return std::string("3: "); }, 3, false},
      {"mpirun tag", [](std::size_t) { return std::string("[1,3]<stdout>:"); }, 3, false},
      {"slurm node:task", [](std::size_t) { return std::string("[0434:3]:"); }, 3, false},
      {"torchtune job|rank", [](std::size_t) { return std::string("[trainer0|3]:"); }, 3, false},
      {"[Rank 3]", [](std::size_t) { return std::string("[Rank 3] "); }, 3, false},
      {"rank=3", [](std::size_t) { return std::string("rank=3 "); }, 3, false},
      {"stdout:", [](std::size_t) { return std::string("stdout: "); }, -1, false},
      {"Ray actor", [](std::size_t) { return std::string("(TaskRunner pid=4242) "); }, -1, false},
      {"host", [](std::size_t) { return std::string("gpu-node-07: "); }, -1, false},
      {"quote", [](std::size_t) { return std::string("> "); }, -1, false},
      {"indent", [](std::size_t) { return std::string("    "); }, -1, false},
      {"host rank time",
       [](std::size_t n) { return fmt::format("worker-1: [rank3]: {} ", iso_time(n)); }, 3, true},
  };
}

std::string with_prefix(const std::string& text, const PrefixKind& kind) {
  std::istringstream in(text);
  std::string line, out;
  for (std::size_t n = 0; std::getline(in, line); ++n) {
    out += kind.prefix(n);
    out += line;
    out += '\n';
  }
  return out;
}

bool nearly_same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a));
}

/// `clocked`: the log's step times come from its own timestamps, which an outer dated prefix
/// replaces (the outermost dated timestamp wins).
void expect_same_run(const Run& base, const Run& got, const PrefixKind& kind, bool clocked) {
  ASSERT_EQ(got.format, base.format);
  ASSERT_EQ(got.iterations.size(), base.iterations.size());
  for (std::size_t i = 0; i < base.iterations.size(); ++i) {
    const Iteration a = base.iterations[i], b = got.iterations[i];
    EXPECT_EQ(b.step, a.step) << "record " << i;
    EXPECT_EQ(b.count, a.count) << "record " << i;
    EXPECT_EQ(b.line, a.line) << "record " << i;
    // A dated prefix may give time to records that had none; times the log prints stay.
    if (!(kind.dated && (std::isnan(a.time_s) || clocked))) {
      EXPECT_TRUE(nearly_same(b.time_s, a.time_s)) << i;
    }
    EXPECT_TRUE(nearly_same(b.tokens, a.tokens)) << "record " << i;
    EXPECT_TRUE(nearly_same(b.loss, a.loss)) << "record " << i;
    EXPECT_TRUE(nearly_same(b.model_flops, a.model_flops)) << "record " << i;
    EXPECT_TRUE(nearly_same(b.reported_mfu, a.reported_mfu)) << "record " << i;
    for (std::size_t p = 0; p < kPhaseCount; ++p)
      EXPECT_TRUE(nearly_same(b.phase[p], a.phase[p])) << "record " << i << " phase " << p;
    if (kind.rank >= 0 && a.rank < 0) {
      EXPECT_EQ(b.rank, kind.rank) << "record " << i;
    }
    if (kind.dated) {
      EXPECT_FALSE(std::isnan(b.timestamp_s)) << "record " << i;
    }
  }
  EXPECT_EQ(got.events.size(), base.events.size());
  for (const auto& [key, value] : base.meta.all()) {
    EXPECT_TRUE(got.meta.has(key)) << key;
    if (const auto* d = std::get_if<double>(&value.value)) {
      EXPECT_EQ(got.meta.number(key), *d);
    }
  }
}

const char* const kTextExcerpts[] = {
    "megatron_megads_excerpt.log",
    "megatron_lm_issue756.log",
    "megatron_bert_timers.log",
    "megatron_ds_tflops_excerpt.log",
    "torchtitan_excerpt.log",
    "hf_loss_dicts.log",
    "msswift_stdout_excerpt.log",
    "deepspeed_microstep_timers.log",
    "deepspeed_gptneox.log",
    "dschat_throughput_excerpt.log",
    "dschat_rlhf_excerpt.log",
    "nanogpt_mfu.log",
    "modded_nanogpt_excerpt.txt",
    "mlperf_llama2_lora_h200.txt",
    "maxtext_steps.log",
    "native_excerpt.jsonl",
    "nemo2_bionemo_steps.log",
    "nanotron_issue390_steps.log",
    "llama2c_tinystories_mps.log",
    "llama2c_modded_llama2_issue10.log",
    "torchtune_pr1909_lora_bar.log",
    "torchtune_pr2620_multinode_steps55_61.log",
    "verl_issue1208_gh200_step2.log",
    "verl_rllm_issue54_step4.log",
    "deepspeed_issue1825_notebook_steps.log",
};

TEST(LineLayerMatrix, EveryTextFormatReadsTheSameUnderEveryPrefix) {
  for (const char* file : kTextExcerpts) {
    const std::string text = test::read_file(test::test_data(file));
    const mfu::Run base = ingest_text(text, file);
    ASSERT_FALSE(base.iterations.empty()) << file;
    g_epoch = known(base.first_timestamp_s) && base.first_timestamp_s > 1e9
                  ? std::floor(base.first_timestamp_s)
                  : 1714521600;
    for (const auto& kind : prefix_kinds()) {
      SCOPED_TRACE(fmt::format("{} with prefix '{}'", file, kind.name));
      mfu::Run got;
      try {
        got = ingest_text(with_prefix(text, kind), file);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      expect_same_run(base, got, kind,
                      std::string(file) == "deepspeed_issue1825_notebook_steps.log");
    }
  }
}

/// Each line of `text` coloured as loggers colour theirs (torchtitan, colorlog, rich): a code
/// at its start, around every '|', after every ':' and at its end.
std::string with_colours(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    out += "\x1b[1;32m";
    for (const char c : line) {
      if (c == '|')
        out += "\x1b[2m|\x1b[22m";
      else if (c == ':')
        out += ":\x1b[0m";
      else
        out += c;
    }
    out += "\x1b[0m\n";
  }
  return out;
}

// The line layer removes escape codes before any parser sees a line (the parsers do not look
// for them again), so a coloured log reads as the same run as the plain one.
TEST(LineLayerMatrix, ColouredLinesReadAsPlainOnes) {
  const PrefixKind plain = prefix_kinds().front();
  for (const char* file : kTextExcerpts) {
    SCOPED_TRACE(file);
    const std::string text = test::read_file(test::test_data(file));
    const mfu::Run base = ingest_text(text, file);
    ASSERT_FALSE(base.iterations.empty());
    const std::string coloured = with_colours(text);
    ASSERT_GT(coloured.size(), text.size() + 10);
    mfu::Run got;
    try {
      got = ingest_text(coloured, file);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    expect_same_run(base, got, plain, false);
  }
}

TEST(LineLayerMatrix, APrefixTheGrammarLacksIsNotSilentlyRead) {
  // The check above can fail: a prefix outside the grammar ("<12>" syslog priority) is not
  // peeled, so detection finds no format, or fewer records.
  const std::string text = test::read_file(test::test_data("nanogpt_mfu.log"));
  const mfu::Run base = ingest_text(text, "n.log");
  const PrefixKind syslog{"syslog", [](std::size_t) { return std::string("<12>x "); }, -1, false};
  bool differs = false;
  try {
    const mfu::Run got = ingest_text(with_prefix(text, syslog), "n.log");
    differs = got.iterations.size() != base.iterations.size() || got.format != base.format;
  } catch (const Error&) {
    differs = true;
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace mfu

namespace mfu {
namespace {

// Real lines with each prefix kind (tests/data/README.md gives where each was printed): every
// line that starts with the prefix is peeled to the rank it names, and its body no longer
// starts with the prefix.
struct RealPrefix {
  const char* file;
  const char* prefix;
  std::int32_t rank;       // -1: a launcher prefix without a rank
  const char* body_start;  // the body of a prefixed line begins with this ("" = anything)
};

const RealPrefix kRealPrefixes[] = {
    {"prefix_rank0_torchtitan.log", "[rank0]:", 0, "[titan] "},
    {"prefix_srun_label_mlperf.txt", "0: ", 0, ":::MLLOG "},
    {"prefix_ray_actor_verl.log", "(TaskRunner pid=247607) ", -1, ""},
    {"prefix_trainer_pipe_torchtune.log", "[trainer0|0]:", 0, ""},
    {"prefix_slurm_pair_nanotron.log", "[0434:0]:", 0, "[INFO|DP=0|PP=0|TP=0|lrdn0434]: iteration"},
    {"deepspeed_gptneox.log", "[2023-07-25 ", -1, "[INFO] "},
    {"maxtext_steps.log", "I0811 ", -1, ""},
    {"prefix_host_ip_deepspeed.log", "104.171.201.17", -1, "[INFO] [launch.py:"},
    {"prefix_host_name_hf.log", "x1000c0s6b0n0: ", -1, ""},
    {"prefix_default_tee_returnn.log", "[default0]:", 0, "ep 55 train, step 1347"},
    {"prefix_default_tee_returnn.log", "[default3]:", 3, "ep 55 train, step 1347"},
    {"prefix_mpirun_horovod.log", "[1,0]<stdout>:", 0, ""},
    {"prefix_mpirun_horovod.log", "[1,1]<stdout>:", 1, ""},
    {"prefix_quote_timestamp_nanogpt.log", "> 2023-03-22 ", -1, ""},
    {"prefix_iso_z_katib.log", "2025-08-14T", -1, "INFO     Train Epoch: 1 ["},
};

TEST(RealPrefixes, EachKindIsPeeledOnRealLines) {
  for (const auto& c : kRealPrefixes) {
    SCOPED_TRACE(c.file);
    std::istringstream in(test::read_file(test::test_data(c.file)));
    std::string line;
    std::size_t prefixed = 0;
    LinePeeler peeler;
    for (std::uint64_t n = 1; std::getline(in, line); ++n) {
      const auto p = peeler.peel(line, n);
      if (line.rfind(c.prefix, 0) != 0) continue;
      ++prefixed;
      EXPECT_EQ(p.attrs.rank, c.rank) << line;
      EXPECT_NE(p.body.substr(0, std::strlen(c.prefix)), c.prefix) << line;
      if (*c.body_start && !p.body.empty()) {
        EXPECT_EQ(p.body.substr(0, std::strlen(c.body_start)), c.body_start) << line;
      }
    }
    EXPECT_GT(prefixed, 0u);
  }
}

// ISO 8601 UTC stamps as a Kubernetes job's logger printed them (kubeflow/katib PR #2560): by
// hand, 2025-08-14T23:41:27Z is 1755214887 s (date -u -d 2025-08-14T23:41:27Z +%s), and the
// eighth line's 23:41:59Z is 32 s later.
TEST(RealPrefixes, IsoUtcStampsGiveTheirSeconds) {
  std::istringstream in(test::read_file(test::test_data("prefix_iso_z_katib.log")));
  std::string line;
  std::vector<double> stamps;
  LinePeeler peeler;
  for (std::uint64_t n = 1; std::getline(in, line); ++n)
    stamps.push_back(peeler.peel(line, n).attrs.timestamp_s);
  ASSERT_EQ(stamps.size(), 8u);
  EXPECT_DOUBLE_EQ(stamps[0], 1755214887.0);
  EXPECT_DOUBLE_EQ(stamps[7] - stamps[0], 32.0);
}

// The real rank-tagged excerpts read as their framework's runs, with the values the logs print
// (../shared/samples-next PROVENANCE.md): torchtitan steps 3..10 of rank 0, mfu 0.32% at step 3.
TEST(RealPrefixes, RankTaggedLogsReadAsTheirFramework) {
  const mfu::Run titan = ingest({test::test_data("prefix_rank0_torchtitan.log").string()});
  EXPECT_EQ(titan.format, "torchtitan");
  ASSERT_EQ(titan.iterations.size(), 8u);
  EXPECT_EQ(titan.iterations[0].step, 3);
  EXPECT_EQ(titan.iterations[0].rank, 0);
  EXPECT_NEAR(titan.iterations[0].reported_mfu, 0.0032, 1e-9);
  const mfu::Run mlperf = ingest({test::test_data("prefix_srun_label_mlperf.txt").string()});
  EXPECT_EQ(mlperf.format, "mlperf");
  EXPECT_EQ(mlperf.meta.text("benchmark"), "llama31_8b");
}

// A nanoGPT log quoted in a GitHub reply (karpathy/nanoGPT issue #215): "> " then a timestamp
// before each line, an evaluation at step 3000. By hand from the lines: 15 iter lines, steps
// 2920..3060 every 10; the first at 2023-03-22 09:30:39 UTC = 1679477439 s. The eval sits between
// iter 2990 (09:31:56) and iter 3000 (09:32:41): 45 s for an interval that otherwise takes about
// 10 × 1.097 s, and iter 3000 prints 35392.33 ms for its one iteration against 1.097 s for the
// others, so about 34.3 s of evaluation, not 10 × 35.4 s.
TEST(RealPrefixes, QuotedTimestampedNanoGptKeepsItsClockAndEval) {
  const mfu::Run run = ingest({test::test_data("prefix_quote_timestamp_nanogpt.log").string()});
  EXPECT_EQ(run.format, "nanogpt");
  ASSERT_EQ(run.iterations.size(), 15u);
  EXPECT_EQ(run.iterations[0].step, 2920);
  EXPECT_EQ(run.iterations[run.iterations.size() - 1].step, 3060);
  EXPECT_DOUBLE_EQ(run.iterations[0].timestamp_s, 1679477439.0);
  EXPECT_NEAR(run.iterations[0].time_s, 1.09934, 1e-9);
  double eval_s = 0;
  for (const auto& e : run.events) {
    if (e.kind == EventKind::kEval) eval_s += e.duration_s;
  }
  EXPECT_NEAR(eval_s, 35.39233 - 1.0973, 0.1);
}

}  // namespace
}  // namespace mfu
