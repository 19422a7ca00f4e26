// Every formula against a value computed by hand or published, with its source.
#include <gtest/gtest.h>

#include <cmath>

#include "mfu/error.hpp"
#include "mfu/flops.hpp"
#include "mfu/model.hpp"

namespace mfu {
namespace {

const ModelShape& preset(const char* id) {
  return ModelCatalog::builtin().get(id);
}

TEST(Params, Gpt2SmallMatchesNanoGptCount) {
  // karpathy/nanoGPT prints 124,439,808 params for GPT-2 small with tied embeddings; its
  // estimate_mfu uses non_embedding=True, which drops the 1024x768 position table: 123,653,376.
  const ParamCount p = count_params(preset("gpt2-124m"));
  EXPECT_DOUBLE_EQ(p.total, 124439808.0);
  EXPECT_DOUBLE_EQ(p.matmul_active, 123653376.0);
}

TEST(Params, ClassicGptMatchesNarayananEquation2) {
  // Narayanan et al. 2021 Eq. 2: P = 12*l*h^2*(1 + 13/(12h) + (V+s)/(12*l*h)); our count adds
  // only the final LayerNorm (2h) on top.
  ModelShape m = preset("gpt3-175b");
  const double l = 96, h = 12288, V = 50257, s = 2048;
  const double eq2 = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  EXPECT_DOUBLE_EQ(count_params(m).total, eq2 + 2 * h);
}

TEST(Params, Llama3And8x7bAndDeepSeekMatchPublishedTotals) {
  // Llama-3-8B: 8,030,261,248 (HF safetensors total). Mixtral 8x7B: 46.7B total, 12.9B active
  // (Mistral's announcement). DeepSeek-V3: 671B total, 37B active (tech report, abstract).
  EXPECT_DOUBLE_EQ(count_params(preset("llama3-8b")).total, 8030261248.0);
  const ParamCount mix = count_params(preset("mixtral-8x7b"));
  EXPECT_NEAR(mix.total / 1e9, 46.70, 0.01);
  EXPECT_NEAR(mix.active / 1e9, 12.88, 0.01);
  const ParamCount ds = count_params(preset("deepseek-v3"));
  EXPECT_NEAR(ds.total / 1e9, 671.0, 0.5);
  EXPECT_NEAR(ds.active / 1e9, 37.5, 0.3);
}

TEST(Params, EveryPresetAgreesWithItsStatedTotal) {
  for (const auto& m : ModelCatalog::builtin().all()) {
    ASSERT_TRUE(m.stated_params.has_value()) << m.id;
    const double computed = count_params(m).total;
    EXPECT_NEAR(computed / *m.stated_params, 1.0, 0.02) << m.id << ": " << computed;
  }
}

TEST(Flops, NanoGptGpt2SmallSameAsEstimateMfu) {
  // nanoGPT model.py estimate_mfu: 6N + 12*L*H*Q*T with N = 123,653,376, L=12, H=12, Q=64, T=1024.
  const FlopsPerToken f =
      training_flops_per_token(preset("gpt2-124m"), Convention::kPalm, Recompute::kNone);
  EXPECT_DOUBLE_EQ(f.model, 6.0 * 123653376 + 12.0 * 12 * 12 * 64 * 1024);  // 855,166,464
}

TEST(Flops, PalmPaperPerTokenCount) {
  // Chowdhery et al. 2022 App. B and Table 22: 6*540.35e9 + 12*118*48*256*2048 = 3.2777e12.
  ModelShape m;
  m.params = 540.35e9;
  m.layers = 118;
  m.hidden = 18432;
  m.heads = 48;
  m.head_dim = 256;
  m.seq_len = 2048;
  const FlopsPerToken f = training_flops_per_token(m, Convention::kPalm, Recompute::kNone);
  EXPECT_NEAR(f.model, 3.27774e12, 1e7);
}

TEST(Flops, Llama3At8kPalmAndMegatronDifferByTheCausalHalf) {
  // flop_conventions.md Sec. 11: 5.79e10 (palm) vs 5.14e10 (megatron) FLOPs/token, ~12.5%.
  const auto& m = preset("llama3-8b");
  const FlopsPerToken palm = training_flops_per_token(m, Convention::kPalm, Recompute::kNone);
  const FlopsPerToken mega = training_flops_per_token(m, Convention::kMegatron, Recompute::kNone);
  EXPECT_NEAR(palm.model, 5.7914e10, 1e7);
  EXPECT_NEAR(mega.model, 5.1470e10, 1e7);
  // The causal half of the attention term: 6*L*H*Q*T = 6*32*4096*8192.
  EXPECT_DOUBLE_EQ(palm.attention - mega.attention, 6.0 * 32 * 4096 * 8192);
  EXPECT_NEAR(palm.model / mega.model, 1.125, 0.002);
}

TEST(Flops, Megatron2023MatchesKorthikantiModelFlopsForClassicGpt) {
  // With f = 4h, MHA and no SwiGLU, 60*L*h^2*(1 + 1/5 + s/(5h) + V/(10Lh)) equals Korthikanti
  // et al. 2022 model FLOPs 72*B*s*L*h^2*(1 + s/(6h) + V/(12*L*h)) per token.
  const auto& m = preset("gpt3-175b");
  const double L = 96, h = 12288, s = 2048, V = 50257;
  const FlopsPerToken f = training_flops_per_token(m, Convention::kMegatron2023, Recompute::kNone);
  EXPECT_NEAR(f.model / (72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))), 1.0, 1e-12);
}

TEST(Flops, FullRecomputeMatchesNarayananEquation3) {
  // Narayanan et al. 2021 Eq. 3 (full recomputation, logits not recomputed):
  // 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) per iteration.
  const auto& m = preset("gpt3-175b");
  const double L = 96, h = 12288, s = 2048, V = 50257;
  const FlopsPerToken f = training_flops_per_token(m, Convention::kMegatron2023, Recompute::kFull);
  EXPECT_NEAR(f.hardware / (96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))), 1.0, 1e-12);
}

TEST(Flops, SelectiveRecomputeMatchesKorthikantiHardwareFlops) {
  // Korthikanti et al. 2022 Sec. 6: 72*B*s*l*h^2*(1 + s/(3h) + V/(12*l*h)) with selective
  // recompute.
  const auto& m = preset("gpt3-175b");
  const double L = 96, h = 12288, s = 2048, V = 50257;
  const FlopsPerToken f =
      training_flops_per_token(m, Convention::kMegatron2023, Recompute::kSelective);
  EXPECT_NEAR(f.hardware / (72 * L * h * h * (1 + s / (3 * h) + V / (12 * L * h))), 1.0, 1e-12);
}

TEST(Flops, Megatron2024ReproducesMixtralIssue756Throughput) {
  // NVIDIA/Megatron-LM issue #756: Mixtral 8x7B, GBS 128, 16 GPUs, 9496.4 ms -> 137.5 TFLOP/s/GPU,
  // i.e. ~1306 TFLOP per GPU per iteration; at seq 2048 that is 7.97e10 FLOPs per token.
  ModelShape m = preset("mixtral-8x7b");
  m.seq_len = 2048;
  const FlopsPerToken f = training_flops_per_token(m, Convention::kMegatron2024, Recompute::kNone);
  const double per_gpu_tflops = f.model * 128 * 2048 / (9.4964 * 16) / 1e12;
  EXPECT_NEAR(per_gpu_tflops, 137.5, 0.1);
}

TEST(Flops, MegatronDeepSpeedReproducesStarksimQwenTflops) {
  // stark-sim/megatron-deepspeed-lock-clock qwen7b_baseline_500.log, iteration 1: Qwen2.5-7B shape,
  // seq 2048, GBS 16, 16 GPUs, full recompute, 15165.9 ms -> "TFLOPs: 7.97".
  ModelShape m = preset("qwen2.5-7b");
  m.seq_len = 2048;
  const FlopsPerToken f =
      training_flops_per_token(m, Convention::kMegatronDeepSpeed, Recompute::kFull);
  EXPECT_NEAR(f.hardware * 16 * 2048 / (15.1659 * 16) / 1e12, 7.97, 0.005);
}

TEST(Flops, MegatronNeedsTheShapeAndSaysWhatIsMissing) {
  ModelShape m;
  m.params = 7e9;
  try {
    (void)training_flops_per_token(m, Convention::kMegatron, Recompute::kNone, 2048);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the layers"), std::string::npos);
  }
  // palm works with params alone and says the attention term is missing.
  const FlopsPerToken f = training_flops_per_token(m, Convention::kPalm, Recompute::kNone);
  EXPECT_DOUBLE_EQ(f.model, 42e9);
  EXPECT_FALSE(f.note.empty());
}

TEST(Model, ReadsHuggingFaceConfig) {
  const ModelShape m =
      parse_hf_config(R"({"model_type":"llama","num_hidden_layers":32,"hidden_size":4096,
      "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,
      "max_position_embeddings":8192,"hidden_act":"silu","tie_word_embeddings":false})",
                      "config.json");
  EXPECT_DOUBLE_EQ(count_params(m).total, 8030261248.0);
  EXPECT_THROW((void)parse_hf_config(R"({"model_type":"llama"})", "x.json"), Error);
  EXPECT_THROW((void)parse_hf_config("not json", "x.json"), Error);
  // Fields of the wrong type read as absent; they never escape as a JSON library exception.
  const ModelShape odd =
      parse_hf_config(R"({"model_type":5,"_name_or_path":{},"hidden_act":[1],"num_hidden_layers":2,
      "hidden_size":64,"num_attention_heads":4,"intermediate_size":256,"vocab_size":100})",
                      "odd.json");
  EXPECT_EQ(odd.layers, 2);
  EXPECT_FALSE(odd.gated_mlp);
}

TEST(Model, UnknownPresetSuggestsClosest) {
  try {
    (void)ModelCatalog::builtin().get("llama3-7b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("llama3-8b"), std::string::npos);
  }
}

}  // namespace
}  // namespace mfu
