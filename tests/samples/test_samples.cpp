// Every real log in ../shared/samples: detected as its folder's format, parsed, analyzed, and
// its buckets add up to its wall time. A missing folder fails (MFU_SAMPLES_DIR points elsewhere).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

namespace fs = std::filesystem;

#define FAIL_WITHOUT_SAMPLES() \
  MFU_FAIL_WITHOUT_INPUT("../shared/samples is not here: these tests walk its real logs")

/// Files the samples README calls "not logs, kept for context": an author's own report.
bool not_a_log(const std::string& name) {
  return name == "PROVENANCE.md" || name == "README.md" ||
         name.find("_report.json") != std::string::npos;
}

std::set<std::string> expected_formats(const std::string& folder) {
  static const std::map<std::string, std::set<std::string>> m = {
      {"megatron", {"megatron", "metadata"}},
      {"golden_values", {"megatron-golden", "metadata"}},
      {"torchtitan", {"torchtitan"}},
      {"hf_trainer", {"hf-trainer", "hf-trainer-state"}},
      {"deepspeed", {"deepspeed"}},
      {"nanogpt_llmc", {"nanogpt"}},
      {"mlperf", {"mlperf", "metadata"}},
      {"kineto_trace", {"kineto"}},
      {"other", {"maxtext"}},
  };
  auto it = m.find(folder);
  return it == m.end() ? std::set<std::string>{} : it->second;
}

std::vector<fs::path> sample_files() {
  std::vector<fs::path> out;
  const fs::path root = test::samples_dir();
  if (root.empty()) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && !not_a_log(e.path().filename().string())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string sniff_format(const fs::path& p) {
  // Read through ingest's detector on the head of the (decompressed) file.
  IngestOptions o;
  try {
    const mfu::Run r = ingest({p.string()}, o);
    return r.format;
  } catch (const Error& e) {
    if (std::string(e.what()).find("only metadata") != std::string::npos) return "metadata";
    throw;
  }
}

TEST(Samples, FolderIsPresentOrSaysSo) {
  if (test::samples_dir().empty()) FAIL_WITHOUT_SAMPLES();
  EXPECT_GT(sample_files().size(), 20u);
}

TEST(Samples, EveryLogIsDetectedAsItsFoldersFormatAndParses) {
  if (test::samples_dir().empty()) FAIL_WITHOUT_SAMPLES();
  for (const auto& p : sample_files()) {
    const std::string folder = p.parent_path().filename().string();
    const auto expected = expected_formats(folder);
    ASSERT_FALSE(expected.empty())
        << "no expected format for folder " << folder << " (" << p << ")";
    try {
      const std::string got = sniff_format(p);
      EXPECT_TRUE(expected.count(got)) << p << ": detected as " << got;
    } catch (const Error& e) {
      ADD_FAILURE() << p << ": " << e.located_message();
    }
  }
}

TEST(Samples, EveryLogIsAnalyzedAndItsBucketsAddUpToItsWallTime) {
  if (test::samples_dir().empty()) FAIL_WITHOUT_SAMPLES();
  const GpuDatabase db = GpuDatabase::builtin();
  for (const auto& p : sample_files()) {
    const std::string name = p.filename().string();
    if (name.find("_system.json") != std::string::npos ||
        name.find("model_config.yaml") != std::string::npos)
      continue;
    SCOPED_TRACE(p.string());
    try {
      const mfu::Run run = ingest({p.string()});
      const Analysis a = analyze(run, AnalyzeOptions{}, db);
      double sum = 0;
      for (const auto& b : a.buckets) {
        EXPECT_GE(b.seconds, 0.0) << b.name;
        sum += b.seconds;
      }
      EXPECT_NEAR(sum, a.wall_time_s, 1e-6 * std::max(1.0, a.wall_time_s));
      if (a.mfu) {
        EXPECT_GT(*a.mfu, 0.0);
        EXPECT_LE(*a.mfu, 1.0);
      }
    } catch (const Error& e) {
      ADD_FAILURE() << p << ": " << e.located_message();
    }
  }
}

/// Where a log prints its own TFLOP/s, mfu recomputes it from the model shape and batch found
/// in the log (or given as flags) under the framework's convention: within 2%.
TEST(Samples, FrameworkThroughputIsReproducedWithinTwoPercent) {
  if (test::samples_dir().empty()) FAIL_WITHOUT_SAMPLES();
  struct Case {
    const char* file;
    AnalyzeOptions opt;
    const char* convention;
  };
  AnalyzeOptions none;
  AnalyzeOptions mixtral;
  mixtral.model = ModelCatalog::builtin().get("mixtral-8x7b");
  mixtral.seq_len = 2048;
  mixtral.gpus = 16;
  const std::vector<Case> cases = {
      {"megatron/starksim_qwen7b_baseline_500.log", none, "megatron-deepspeed"},
      {"megatron/starksim_qwen7b_static_1200_500.log", none, "megatron-deepspeed"},
      {"megatron/starksim_dual16_tp4pp1dp4_collect_20260403.log", none, "megatron-deepspeed"},
      {"megatron/NVIDIA_Megatron-LM_issue756_mixtral8x7b_16xH100_run1_iter10-12.log", mixtral,
       "megatron-2024"},
      {"torchtitan/qiu023_phase2_baseline_train.log", none, "palm"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const mfu::Run run = ingest({(test::samples_dir() / c.file).string()});
    const Analysis a = analyze(run, c.opt);
    ASSERT_TRUE(a.framework_agreement.has_value());
    EXPECT_EQ(a.framework_convention, c.convention);
    EXPECT_LT(std::fabs(*a.framework_agreement), 0.02) << *a.framework_agreement;
  }
}

TEST(Samples, ImpossiblePrintedMfuIsNotTrusted) {
  if (test::samples_dir().empty()) FAIL_WITHOUT_SAMPLES();
  // torchtitan fork printing mfu ~15000% (PROVENANCE: a FLOP-counting bug).
  const mfu::Run run =
      ingest({(test::samples_dir() / "torchtitan/qiu023_phase4_kimi_436m_baseline_fsdp_train.log")
                  .string()});
  const Analysis a = analyze(run, AnalyzeOptions{});
  if (a.mfu) {
    EXPECT_LE(*a.mfu, 1.0);
  }
  bool warned = false;
  for (const auto& w : a.warnings) warned = warned || w.find("impossible") != std::string::npos;
  EXPECT_TRUE(warned);
}

// ../shared/samples-next, folder by folder as each format lands (issue 14). Every folder is
// either landed (its files are detected as its format, read, and analyzed or refused for
// lacking timing) or still pending; a folder in neither list fails, so none is skipped unseen.
const std::map<std::string, std::set<std::string>>& landed_next_folders() {
  static const std::map<std::string, std::set<std::string>> m = {
      // Megatron-DeepSpeed prints its own iteration lines beside DeepSpeed's PipelineEngine
      // lines; the iteration lines say more (TFLOP/s), and both give the same step times
      // (DeepSpeedDefault.MegatronDeepSpeedPrintsBothAndTheyAgree).
      {"deepspeed", {"deepspeed", "megatron"}},
      {"fairseq", {"fairseq"}},
      {"hf_trainer", {"hf-trainer", "hf-trainer-state"}},
      {"kineto_trace", {"kineto"}},
      {"llama2c", {"nanogpt"}},  // llama2.c, llm.c and nanoGPT share one parser
      {"megatron_ranks", {"megatron", "torchtitan"}},
      {"mlperf", {"mlperf"}},
      // trainer_log.jsonl; the web UI's running_log.txt is the Trainer's console under
      // LLaMA-Factory's logger; train_results.json is the Trainer's summary.
      {"llamafactory", {"llamafactory", "hf-trainer", "hf-trainer-state"}},
      {"nanotron", {"nanotron"}},
      {"olmo", {"olmo", "maxtext"}},  // and a MaxText tutorial's lines
      {"nemo1", {"nemo"}},
      {"nemo2", {"nemo"}},
      // Megatron-LM event files, and a W&B run's output.log (nanoGPT's console) and summary.
      {"tensorboard", {"tensorboard", "nanogpt", "wandb-summary"}},
      {"torchtune", {"torchtune"}},
      {"verl", {"verl"}},
  };
  return m;
}

const std::set<std::string>& pending_next_folders() {
  static const std::set<std::string> s = {};
  return s;
}

TEST(SamplesNext, EveryFolderIsLandedOrPending) {
  const fs::path root = test::samples_next_dir();
  if (root.empty()) FAIL_WITHOUT_SAMPLES();
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    const std::string folder = e.path().filename().string();
    EXPECT_TRUE(landed_next_folders().count(folder) || pending_next_folders().count(folder))
        << "samples-next/" << folder << " is neither landed nor pending";
  }
}

TEST(SamplesNext, LandedFoldersAreDetectedReadAndAnalyzedOrRefused) {
  const fs::path root = test::samples_next_dir();
  if (root.empty()) FAIL_WITHOUT_SAMPLES();
  const GpuDatabase db = GpuDatabase::builtin();
  for (const auto& [folder, formats] : landed_next_folders()) {
    ASSERT_TRUE(fs::is_directory(root / folder)) << folder;
    for (const auto& e : fs::directory_iterator(root / folder)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || not_a_log(name)) continue;
      // A system.json alone is refused (it is read with the results beside it).
      const bool companion = name.find("_system.json") != std::string::npos;
      SCOPED_TRACE(e.path().string());
      try {
        const mfu::Run run = ingest({e.path().string()});
        EXPECT_FALSE(companion) << "a companion file alone was read as a run";
        EXPECT_TRUE(formats.count(run.format)) << "detected as " << run.format;
        const Analysis a = analyze(run, AnalyzeOptions{}, db);
        if (a.untimed) continue;  // refused by the CLI, naming what is missing
        double sum = 0;
        for (const auto& b : a.buckets) sum += b.seconds;
        EXPECT_NEAR(sum, a.wall_time_s, 1e-6 * std::max(1.0, a.wall_time_s));
      } catch (const Error& err) {
        if (companion && std::string(err.what()).find("only metadata") != std::string::npos)
          continue;
        ADD_FAILURE() << err.located_message();
      }
    }
  }
}

}  // namespace
}  // namespace mfu
