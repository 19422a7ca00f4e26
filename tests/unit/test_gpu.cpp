#include <gtest/gtest.h>

#include "mfu/error.hpp"
#include "mfu/gpu.hpp"

namespace mfu {
namespace {

const GpuDatabase& db() {
  static const GpuDatabase d = GpuDatabase::builtin();
  return d;
}

TEST(GpuDatabase, HoldsEveryAcceleratorOfTheReferenceTable) {
  // shared/reference/gpu_peaks.csv lists 36 accelerators; we add RTX 5090 and one MI250X GCD.
  const char* ids[] = {"v100-sxm2",
                       "v100-pcie",
                       "v100s-pcie",
                       "t4",
                       "a10",
                       "a10g",
                       "a100-sxm4-40gb",
                       "a100-sxm4-80gb",
                       "a100-pcie-40gb",
                       "a100-pcie-80gb",
                       "l4",
                       "l40s",
                       "h100-sxm",
                       "h100-pcie",
                       "h100-nvl",
                       "h200-sxm",
                       "h200-nvl",
                       "h20",
                       "gh200",
                       "b200",
                       "gb200",
                       "b100",
                       "rtx-3090",
                       "rtx-4090",
                       "rtx-a6000",
                       "mi250x",
                       "mi300x",
                       "mi325x",
                       "mi355x",
                       "gaudi2",
                       "gaudi3",
                       "tpu-v4",
                       "tpu-v5e",
                       "tpu-v5p",
                       "tpu-v6e",
                       "tpu-v7x"};
  for (const char* id : ids) EXPECT_NE(db().try_resolve(id).spec, nullptr) << id;
  EXPECT_GE(db().all().size(), 36u);
  for (const auto& s : db().all()) {
    EXPECT_FALSE(s.source.empty()) << s.id;
    EXPECT_FALSE(s.interconnect_source.empty()) << s.id;
    EXPECT_GT(s.memory_bytes, 0) << s.id;
  }
}

TEST(GpuDatabase, UsesDenseNotSparsePeaks) {
  // NVIDIA's H100 SXM datasheet headline 1,979 TFLOPS bf16 is with sparsity; dense is 989.5.
  const GpuSpec& h100 = *db().resolve("h100-sxm").spec;
  EXPECT_DOUBLE_EQ(*h100.dense_peak(Dtype::kBf16), 989.5e12);
  EXPECT_DOUBLE_EQ(h100.sparse_flops.at(Dtype::kBf16), 1979e12);
  EXPECT_DOUBLE_EQ(*db().resolve("a100-sxm4-80gb").spec->dense_peak(Dtype::kBf16), 312e12);
  EXPECT_DOUBLE_EQ(*db().resolve("tpu-v4").spec->dense_peak(Dtype::kBf16), 275e12);
}

TEST(GpuDatabase, ResolvesWhatPeopleTypeAndWhatToolsPrint) {
  EXPECT_EQ(db().resolve("H100-SXM").spec->id, "h100-sxm");
  EXPECT_EQ(db().resolve("h100_sxm5").spec->id, "h100-sxm");
  EXPECT_EQ(db().resolve("NVIDIA H100 80GB HBM3").spec->id, "h100-sxm");  // nvidia-smi
  EXPECT_EQ(db().resolve("NVIDIA H100 PCIe").spec->id, "h100-pcie");
  EXPECT_EQ(db().resolve("mi300x").spec->id, "mi300x");
  EXPECT_EQ(db().resolve("tpu-v5p").spec->id, "tpu-v5p");
  EXPECT_EQ(db().resolve("TPU-v5p").spec->id, "tpu-v5p");  // MLPerf system.json
  EXPECT_EQ(db().resolve("NVIDIA H200-SXM5-141GB").spec->id, "h200-sxm");
  EXPECT_EQ(db().resolve("Tesla V100-SXM2-32GB").spec->id, "v100-sxm2");
  EXPECT_EQ(db().resolve("NVIDIA A100-SXM4-40GB").spec->id, "a100-sxm4-40gb");
}

TEST(GpuDatabase, L40sDoesNotResolveToL4) {
  // Lightning's name matching turns any name containing "l4" into the L4 entry.
  EXPECT_EQ(db().resolve("L40S").spec->id, "l40s");
  EXPECT_EQ(db().resolve("NVIDIA L40S").spec->id, "l40s");
  EXPECT_EQ(db().resolve("L4").spec->id, "l4");
}

TEST(GpuDatabase, AmbiguousNameResolvesToTheDocumentedDefaultAndSaysSo) {
  const GpuMatch m = db().resolve("h100");
  EXPECT_EQ(m.spec->id, "h100-sxm");
  EXPECT_NE(m.note.find("several parts"), std::string::npos);
  EXPECT_NE(m.note.find("h100-pcie"), std::string::npos);
  const GpuMatch a = db().resolve("a100-80g");
  EXPECT_EQ(a.spec->id, "a100-sxm4-80gb");
  EXPECT_FALSE(a.note.empty());
}

TEST(GpuDatabase, UnknownNameListsClosestMatches) {
  try {
    (void)db().resolve("h300");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("closest"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("h200-sxm"), std::string::npos);
  }
}

TEST(GpuDatabase, OverridesAndAddsEntriesFromJson) {
  GpuDatabase d = GpuDatabase::builtin();
  d.merge_json(
      R"({"accelerators":[{"id":"h100-sxm","name":"tuned H100","dense_tflops":{"bf16":800}},
                                    {"id":"my-chip","aliases":["My Chip 9000"],"dense_tflops":{"bf16":123}}]})",
      "test");
  EXPECT_DOUBLE_EQ(*d.resolve("h100-sxm").spec->dense_peak(Dtype::kBf16), 800e12);
  EXPECT_DOUBLE_EQ(*d.resolve("My Chip 9000").spec->dense_peak(Dtype::kBf16), 123e12);
  EXPECT_THROW(d.merge_json("{not json", "bad.json"), Error);
  EXPECT_THROW(d.merge_json(R"({"accelerators":[{"id":"x"}]})", "nopeak.json"), Error);
}

TEST(GpuDatabase, ParsesDtypeSpellings) {
  EXPECT_EQ(parse_dtype("bf16"), Dtype::kBf16);
  EXPECT_EQ(parse_dtype("torch.bfloat16"), Dtype::kBf16);
  EXPECT_EQ(parse_dtype("fp16"), Dtype::kFp16);
  EXPECT_THROW((void)parse_dtype("fp13"), Error);
}

}  // namespace
}  // namespace mfu
