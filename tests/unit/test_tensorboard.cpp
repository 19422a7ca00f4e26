// TensorBoard event files: the TFRecord framing and its checksums (a published test vector and
// crafted damage), the tag table of each framework on crafted events, and the Megatron-LM event
// files of ../shared/samples-next/tensorboard (PROVENANCE there) where they exist.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/crc32c.hpp"
#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "proto/tensorboard/event.pb.h"
#include "test_util.hpp"

namespace mfu {
namespace {

// ---- writing event files ----------------------------------------------------------------

std::string le(std::uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return s;
}

/// One TFRecord: length, its masked CRC, the data, the data's masked CRC.
std::string frame(const std::string& data) {
  const std::string len = le(data.size(), 8);
  return len + le(detail::masked_crc32c(len), 4) + data + le(detail::masked_crc32c(data), 4);
}

std::string version_record(double wall) {
  tensorboard::Event e;
  e.set_wall_time(wall);
  e.set_file_version("brain.Event:2");
  return frame(e.SerializeAsString());
}

/// An event of scalars at `step`, written as simple values or as rank-0 float tensors.
std::string scalars(std::int64_t step, double wall,
                    const std::vector<std::pair<std::string, double>>& values,
                    bool tensors = false) {
  tensorboard::Event e;
  e.set_wall_time(wall);
  e.set_step(step);
  for (const auto& [tag, v] : values) {
    auto* s = e.mutable_summary()->add_value();
    s->set_tag(tag);
    if (tensors) {
      s->mutable_metadata()->mutable_plugin_data()->set_plugin_name("scalars");
      s->mutable_tensor()->set_dtype(tensorboard::DT_FLOAT);
      s->mutable_tensor()->add_float_val(static_cast<float>(v));
    } else {
      s->set_simple_value(static_cast<float>(v));
    }
  }
  return frame(e.SerializeAsString());
}

std::string write_events(const std::string& name, const std::string& bytes) {
  const auto dir = std::filesystem::temp_directory_path() / "mfu_tb_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  test::write_file(path, bytes);
  return path.string();
}

// ---- framing --------------------------------------------------------------------------

// RFC 3720 (iSCSI), appendix B.4: CRC-32C of the ASCII digits "123456789" is 0xE3069283; of
// 32 zero bytes, 0x8A9136AA.
TEST(Crc32c, PublishedVectors) {
  EXPECT_EQ(detail::crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(detail::crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(detail::crc32c(""), 0u);
}

// A Megatron-like run of 4 logged steps, written 2 s apart with iteration-time 2 s: read back
// as 4 records. A data byte flipped in record 3 fails its checksum: that record alone is
// skipped and said; a length byte flipped stops the reading there, said; a file cut inside a
// record is said to be cut off. None of them crashes.
TEST(TensorboardFraming, ChecksumsAreCheckedAndDamageIsSaid) {
  std::string file = version_record(1000);
  for (int s = 1; s <= 4; ++s)
    file += scalars(s, 1000 + 2 * s, {{"iteration-time", 2.0}, {"lm loss", 10.0 - s}});
  const mfu::Run good = ingest({write_events("events.out.tfevents.good", file)});
  EXPECT_EQ(good.format, "tensorboard");
  ASSERT_EQ(good.iterations.size(), 4u);
  EXPECT_DOUBLE_EQ(good.iterations[2].time_s, 2.0);
  EXPECT_NEAR(good.iterations[3].loss, 6.0, 1e-6);

  // Record 3 is the second scalar event: past the version record and the first event.
  const std::size_t first = version_record(1000).size();
  const std::size_t second = scalars(1, 1002, {{"iteration-time", 2.0}, {"lm loss", 9.0}}).size();
  std::string data_hit = file;
  data_hit[first + second + 20] ^= 0x01;  // inside the data of record 3
  const mfu::Run d = ingest({write_events("events.out.tfevents.data", data_hit)});
  ASSERT_EQ(d.iterations.size(), 3u);
  EXPECT_TRUE(test::has_diagnostic(d, "does not match its checksum"));

  std::string length_hit = file;
  length_hit[first + second + 1] ^= 0x01;  // the length of record 3
  const mfu::Run l = ingest({write_events("events.out.tfevents.length", length_hit)});
  ASSERT_EQ(l.iterations.size(), 1u);
  EXPECT_TRUE(test::has_diagnostic(l, "length does not match its checksum"));

  const mfu::Run c =
      ingest({write_events("events.out.tfevents.cut", file.substr(0, file.size() - 5))});
  EXPECT_EQ(c.iterations.size(), 3u);
  EXPECT_TRUE(c.truncated);
  EXPECT_TRUE(test::has_diagnostic(c, "ends inside record"));
}

// ---- the tag table ----------------------------------------------------------------------

// torchtitan's and MaxText's tags, as scalar tensors (TF2 style) and simple values: time,
// loss, per-GPU FLOP/s, MFU and the data-loading phase land in their fields. (No public event
// file of either was found; the tags are those their metric loggers write.)
TEST(TensorboardTags, FrameworksTagsMapToFields) {
  std::string titan = version_record(50);
  for (int s = 1; s <= 3; ++s)
    titan += scalars(s, 50 + s,
                     {{"loss_metrics/global_avg_loss", 3.5},
                      {"time_metrics/end_to_end(s)", 1.25},
                      {"time_metrics/data_loading(s)", 0.05},
                      {"tflops", 400.0},
                      {"mfu(%)", 40.5}},
                     true);
  const mfu::Run t = ingest({write_events("events.out.tfevents.titan", titan)});
  ASSERT_EQ(t.iterations.size(), 3u);
  const Iteration it = t.iterations[1];
  EXPECT_DOUBLE_EQ(it.time_s, 1.25);
  EXPECT_NEAR(it.loss, 3.5, 1e-6);
  EXPECT_NEAR(it.at(Phase::kData), 0.05, 1e-7);
  EXPECT_NEAR(it.reported_flops_per_gpu, 400e12, 1e6);
  EXPECT_NEAR(it.reported_mfu, 0.405, 1e-6);

  std::string maxtext = version_record(50);
  for (int s = 0; s < 3; ++s)
    maxtext += scalars(s, 50 + s,
                       {{"perf/step_time_seconds", 5.667},
                        {"perf/per_device_tflops_per_sec", 134.9},
                        {"learning/loss", 10.374}});
  const mfu::Run m = ingest({write_events("events.out.tfevents.maxtext", maxtext)});
  ASSERT_EQ(m.iterations.size(), 3u);
  EXPECT_NEAR(m.iterations[2].time_s, 5.667, 1e-6);
  EXPECT_NEAR(m.iterations[2].reported_flops_per_gpu, 134.9e12, 1e7);
}

// ---- the samples --------------------------------------------------------------------------

// Megatron-LM MoE debug run (1 node x 4 GPUs): iteration-time 10.751 s at step 2, 0.5527 s at
// step 3, 0.5324 s at step 6; throughput 2.02, 76.38 and 79.28 TFLOP/s per GPU at steps 1, 3, 6;
// lm loss 11.847 at step 1 and 9.752 at step 6.
TEST(TensorboardSamples, MegatronMoeRun) {
  const std::string path =
      test::next_sample("tensorboard", "NVIDIA_Megatron-LM_noua_moe_debug_1n4gpu");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/tensorboard is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "tensorboard");
  ASSERT_EQ(r.iterations.size(), 6u);
  EXPECT_NEAR(r.iterations[1].time_s, 10.751, 1e-3);
  EXPECT_NEAR(r.iterations[2].time_s, 0.5527, 1e-4);
  EXPECT_NEAR(r.iterations[5].time_s, 0.5324, 1e-4);
  EXPECT_NEAR(r.iterations[0].reported_flops_per_gpu, 2.02e12, 0.005e12);
  EXPECT_NEAR(r.iterations[2].reported_flops_per_gpu, 76.38e12, 0.005e12);
  EXPECT_NEAR(r.iterations[5].reported_flops_per_gpu, 79.28e12, 0.005e12);
  EXPECT_NEAR(r.iterations[0].loss, 11.847, 1e-3);
  EXPECT_NEAR(r.iterations[5].loss, 9.752, 1e-3);
}

// Megatron-LM (2021) GPT-3 357M on 16 GPUs: no iteration-time scalar, so the steps are timed by
// the events' wall times; the job's clock runs from the writer's file_version record
// (1623896925) to the last step (1623897113): 188 s with the start-up. lm loss 11.0685 at
// iteration 1, 9.0005 at 100. The repeat on dgx0066 holds the same losses in 82 s.
TEST(TensorboardSamples, Megatron2021RunIsTimedByItsWallTimes) {
  const std::string a = test::next_sample(
      "tensorboard", "NVIDIA_Megatron-LM_gpt3-357m_16gpu_2021_events.out.tfevents.1623896925");
  const std::string b = test::next_sample(
      "tensorboard", "NVIDIA_Megatron-LM_gpt3-357m_16gpu_2021_events.out.tfevents.1623897185");
  if (a.empty() || b.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/tensorboard is not here");
  const mfu::Run r = ingest({a});
  ASSERT_EQ(r.iterations.size(), 100u);
  EXPECT_NEAR(r.iterations[0].loss, 11.0685, 1e-4);
  EXPECT_NEAR(r.iterations[99].loss, 9.0005, 1e-4);
  EXPECT_NEAR(analyze(r, {}).wall_time_s, 188, 1.0);
  const mfu::Run s = ingest({b});
  EXPECT_NEAR(s.iterations[99].loss, 9.0005, 1e-4);
  EXPECT_NEAR(analyze(s, {}).wall_time_s, 82, 1.0);
}

// The 88-byte file of a job that died before logging: only its file_version record. Read as an
// event file, and refused with what it holds.
TEST(TensorboardSamples, AnEventFileWithoutScalarsIsRefused) {
  const std::string path =
      test::next_sample("tensorboard", "NVIDIA_Megatron-LM_noua_moe_debug_EMPTY");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/tensorboard is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "tensorboard");
  EXPECT_TRUE(r.iterations.empty());
  EXPECT_TRUE(test::has_diagnostic(r, "1 record(s) and no scalar"));
  const auto cli = test::run_mfu("analyze " + test::shell_quote(path));
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("no scalar"), std::string::npos) << cli.err;
}

// ---- Weights & Biases run files ------------------------------------------------------------

// samples-next/tensorboard, jackokeefe11/nanoGPT's wandb-summary.json: iter 1250 and _runtime
// 172.257 s: one record of 1250 steps, 0.1378 s each (compile and evaluations included).
TEST(WandbFiles, SummaryIsOneRecordOfTheRun) {
  const std::string path = test::next_sample(
      "tensorboard", "jackokeefe11_nanoGPT_wandb_run-20240214_191025-bn1klkfl_files_wandb-summary");
  if (path.empty()) MFU_FAIL_WITHOUT_INPUT("samples-next/tensorboard is not here");
  const mfu::Run r = ingest({path});
  EXPECT_EQ(r.format, "wandb-summary");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].step, 1250);
  EXPECT_EQ(r.iterations[0].count, 1250u);
  EXPECT_NEAR(r.iterations[0].time_s, 172.25662660598755 / 1250, 1e-12);
}

// wandb-history.jsonl (made by hand: no public one was found): W&B's _step counts the calls, the
// run's own "iter" the steps. Calls at iter 0, 100 and 200 with _runtime 10, 20.5 and 31 s:
// two records of 100 steps, 0.105 s each.
TEST(WandbFiles, HistoryStepsAreTheUsersAndTimedByRuntime) {
  const std::string text =
      "{\"_step\": 0, \"_runtime\": 10.0, \"_timestamp\": 1700000010, \"iter\": 0, "
      "\"train/loss\": 4.0}\n"
      "{\"_step\": 1, \"_runtime\": 20.5, \"_timestamp\": 1700000020.5, \"iter\": 100, "
      "\"train/loss\": 3.0}\n"
      "{\"_step\": 2, \"_runtime\": 31.0, \"_timestamp\": 1700000031, \"iter\": 200, "
      "\"train/loss\": 2.5}\n";
  const mfu::Run r = ingest_text(text, "wandb-history.jsonl");
  EXPECT_EQ(r.format, "wandb-history");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations[2].step, 200);
  EXPECT_EQ(r.iterations[2].count, 100u);
  EXPECT_NEAR(r.iterations[1].time_s, 0.105, 1e-12);
  EXPECT_NEAR(r.iterations[2].loss, 2.5, 1e-6);
}

}  // namespace
}  // namespace mfu
