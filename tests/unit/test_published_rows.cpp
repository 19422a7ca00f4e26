// Published tables reproduced by mfu's formulas, each row under the convention its source used.
// The rows live in tests/data/published/ with their sources: PaLM Table 3, the MFU/HFU table of
// the Megatron-LM README (Korthikanti et al. 2022), Narayanan et al. 2021 Table 1, torchtitan's
// Llama 3.1 benchmark page, MaxText's tiering table, Llama 3 Table 4, and every row of
// llm-foundry's MPT benchmark tables. Nothing here is computed by the code under test before it is
// compared: the expected values are the sources' printed numbers.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/calc.hpp"
#include "mfu/flops.hpp"
#include "mfu/model.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

using Row = std::vector<std::string>;

/// A small CSV reader for the data files: '#' lines are comments, the first other line names
/// the columns, no field holds a comma.
std::vector<Row> read_csv(const std::string& name, Row* header) {
  std::ifstream in(test::test_data("published/" + name));
  EXPECT_TRUE(in) << name;
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Row fields;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ',')) fields.push_back(f);
    if (line.back() == ',') fields.emplace_back();
    if (header->empty()) {
      *header = fields;
    } else {
      rows.push_back(fields);
    }
  }
  return rows;
}

struct Columns {
  const Row& header;
  const Row& row;
  [[nodiscard]] const std::string& text(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return row.at(i);
    throw std::runtime_error("no column " + name);
  }
  [[nodiscard]] double number(const std::string& name) const { return std::stod(text(name)); }
  [[nodiscard]] std::int64_t integer(const std::string& name) const {
    return text(name).empty() ? 0 : std::stoll(text(name));
  }
};

ModelShape shape_of(const Columns& c) {
  if (!c.text("preset").empty()) {
    ModelShape m = ModelCatalog::builtin().get(c.text("preset"));
    m.seq_len = c.integer("seq_len");
    return m;
  }
  ModelShape m;
  m.id = "custom";
  m.layers = c.integer("layers");
  m.hidden = c.integer("hidden");
  m.heads = c.integer("heads");
  m.head_dim = c.integer("head_dim");
  m.vocab = c.integer("vocab");
  m.seq_len = c.integer("seq_len");
  if (!c.text("params").empty() && c.text("kind") != "params") m.params = c.number("params");
  return m;
}

void check_throughput_row(const Columns& c) {
  CalcInputs in;
  in.model = shape_of(c);
  in.convention = parse_convention(c.text("convention"));
  in.recompute = parse_recompute(c.text("recompute"));
  in.tokens_per_s = c.number("tokens_per_s");
  in.gpus = c.number("gpus");
  in.gpu = c.text("gpu");
  const CalcResult r = solve(in);
  ASSERT_TRUE(r.mfu.has_value());
  EXPECT_NEAR(*r.mfu * 100, c.number("mfu_pct"), c.number("tolerance_pts"));
}

void check_hfu_ratio_row(const Columns& c) {
  const FlopsPerToken f = training_flops_per_token(
      shape_of(c), parse_convention(c.text("convention")), parse_recompute(c.text("recompute")));
  EXPECT_NEAR(c.number("mfu_pct") * f.hardware / f.model, c.number("hfu_pct"),
              c.number("tolerance_pts"));
}

void check_params_row(const Columns& c) {
  // Narayanan et al. Eq. 2 counts a GPT with biases, a learned position table of seq_len rows
  // and one vocabulary matrix shared by input and output.
  ModelShape m = shape_of(c);
  m.biases = true;
  m.learned_positions = true;
  m.tied_embeddings = true;
  EXPECT_NEAR(count_params(m).total / 1e9, c.number("params"), c.number("tolerance_pts"));
}

TEST(PublishedRows, EachRowReproducesUnderItsSourcesConvention) {
  Row header;
  const auto rows = read_csv("mfu_rows.csv", &header);
  ASSERT_GE(rows.size(), 24U);
  for (const auto& row : rows) {
    const Columns c{header, row};
    SCOPED_TRACE(c.text("source"));
    const std::string& kind = c.text("kind");
    if (kind == "throughput") {
      check_throughput_row(c);
    } else if (kind == "hfu_ratio") {
      check_hfu_ratio_row(c);
    } else if (kind == "params") {
      check_params_row(c);
    } else {
      ADD_FAILURE() << "unknown kind " << kind;
    }
  }
}

// Llama 3 Table 4 (tests/data/published/llama3_table4.csv, sources there). First the
// transcription is checked against itself: the parallel sizes multiply to the GPU count and the
// data-parallel batch to the 16M tokens per batch. Then mfu's calc reproduces the MFU column from
// the TFLOPs/GPU column against the database's H100 SXM BF16 peak (989.5 TFLOP/s): one second of
// a step whose model FLOPs are TFLOPs/GPU x GPUs. Tolerance 1.01 points: the MFU column is
// rounded to whole percent (0.5) and the TFLOPs column to tens (5 / 989.5 = 0.505 points); the
// middle row needs it (400 / 989.5 = 40.4%, printed 41%).
TEST(PublishedRows, Llama3Table4Reproduces) {
  Row header;
  const auto rows = read_csv("llama3_table4.csv", &header);
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& row : rows) {
    const Columns c{header, row};
    SCOPED_TRACE(c.text("gpus") + " GPUs, sequence " + c.text("seq_len"));
    EXPECT_EQ(c.integer("tp") * c.integer("cp") * c.integer("pp") * c.integer("dp"),
              c.integer("gpus"));
    EXPECT_EQ(c.integer("dp") * c.integer("batch_per_dp") * c.integer("seq_len"),
              c.integer("tokens_per_batch"));
    CalcInputs in;
    in.gpu = "h100-sxm";
    in.gpus = c.number("gpus");
    in.step_time_s = 1.0;
    in.flops_per_step = c.number("tflops_per_gpu") * 1e12 * c.number("gpus");
    const CalcResult r = solve(in);
    ASSERT_TRUE(r.mfu.has_value());
    EXPECT_NEAR(*r.mfu * 100, c.number("bf16_mfu_pct"), 1.01);
  }
}

// The same paper (Section 3.2.1): the 405B flagship was "pre-trained using 3.8 x 10^25 FLOPs" on
// 15.6T tokens, i.e. 6N FLOPs per token with N the parameters: the preset's count (from its
// published shape, Table 3) must give 3.8e25 to the paper's two digits.
TEST(PublishedRows, Llama3ComputeBudgetIsSixNTimesTokens) {
  const ModelShape m = ModelCatalog::builtin().get("llama3-405b");
  const double flops = 6.0 * count_params(m).total * 15.6e12;
  EXPECT_NEAR(flops / 1e25, 3.8, 0.05);
}

// llm-foundry's collect_results.py: MFU = (6N + 12 L d T) x tokens/s / (GPUs x peak), the PaLM
// convention with N the model's full parameter count (MPT ties its embeddings), composer's peaks
// (a100 312, h100-sxm 989.5 bf16 and 1979 fp8 TFLOP/s, datasheet / 2), HFU = 4/3 MFU with
// activation checkpointing. All 216 rows agree within 0.01 points (the throughput column is
// printed to whole tokens/s).
TEST(PublishedRows, LlmFoundryBenchmarkTablesReproduce) {
  struct Mpt {
    const char* name;
    std::int64_t hidden, heads, layers;
  };
  const Mpt shapes[] = {{"125m", 768, 12, 12}, {"350m", 1024, 16, 24}, {"760m", 1536, 12, 24},
                        {"1b", 2048, 16, 24},  {"3b", 2560, 20, 32},   {"7b", 4096, 32, 32},
                        {"13b", 5120, 40, 40}, {"30b", 7168, 56, 48},  {"70b", 8192, 64, 80}};
  Row header;
  const auto rows = read_csv("llm_foundry_benchmarks.csv", &header);
  ASSERT_EQ(rows.size(), 216U);
  for (const auto& row : rows) {
    const Columns c{header, row};
    const std::string& model = c.text("model");
    SCOPED_TRACE(model + " on " + c.text("gpus") + " x " + c.text("gpu") +
                 " T=" + c.text("seq_len") + " " + c.text("precision"));
    const Mpt* mpt = nullptr;
    for (const auto& s : shapes)
      if (model == s.name) mpt = &s;
    ASSERT_NE(mpt, nullptr);
    ModelShape m;
    m.id = "custom";
    m.hidden = mpt->hidden;
    m.heads = mpt->heads;
    m.layers = mpt->layers;
    m.seq_len = c.integer("seq_len");
    m.params = c.number("num_params");
    CalcInputs in;
    in.model = m;
    in.convention = Convention::kPalm;
    const bool checkpointing = c.text("activation_checkpointing") == "true";
    in.recompute = checkpointing ? Recompute::kFull : Recompute::kNone;
    in.tokens_per_s = c.number("tokens_per_s");
    in.gpus = c.number("gpus");
    in.gpu = c.text("gpu");
    if (c.text("precision") == "amp_fp8") in.dtype = Dtype::kFp8;
    const CalcResult r = solve(in);
    ASSERT_TRUE(r.mfu.has_value() && r.hfu.has_value());
    EXPECT_NEAR(*r.mfu * 100, c.number("mfu_pct"), 0.01);
    EXPECT_NEAR(*r.hfu * 100, c.number("hfu_pct"), 0.01);
  }
}

}  // namespace
}  // namespace mfu
