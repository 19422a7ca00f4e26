#include <gtest/gtest.h>

#include <fstream>
#include <tuple>

#include "mfu/error.hpp"
#include "mfu/gpu.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

const GpuDatabase& db() {
  static const GpuDatabase d = GpuDatabase::builtin();
  return d;
}

TEST(GpuDatabase, HoldsEveryAcceleratorOfTheReferenceTable) {
  // shared/reference/gpu_peaks.csv lists 36 accelerators; we add RTX 5090, the MI250X GCD and
  // the parts of issue 16 (ResolvesTheNamesOfTheAddedParts).
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
                       "mi250x-oam",
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

// Names as torch.cuda.get_device_name() and rocm-smi print them for parts added in issue 16.
// A ROCm device is one GCD: "AMD Instinct MI250X / MI250" is half an OAM, 191.5 TFLOP/s bf16
// (AMD's 383 for the two-GCD OAM / 2; torchtitan's get_peak_flops uses 191.5e12), so a run on
// 8 GCDs is not judged against 8 x 383 (which halved MFU).
TEST(GpuDatabase, ResolvesTheNamesOfTheAddedParts) {
  const std::pair<const char*, const char*> names[] = {
      {"AMD Instinct MI250X / MI250", "mi250x-gcd"},
      {"AMD Instinct MI250X", "mi250x-gcd"},
      {"AMD Instinct MI250", "mi250-gcd"},
      {"AMD Instinct MI210", "mi210"},
      {"AMD Instinct MI300A", "mi300a"},
      {"NVIDIA H800", "h800-sxm"},
      {"NVIDIA H800 PCIe", "h800-pcie"},
      {"NVIDIA A800-SXM4-80GB", "a800-sxm4-80gb"},
      {"NVIDIA A800 80GB PCIe", "a800-pcie-80gb"},
      {"NVIDIA L40", "l40"},
      {"NVIDIA A40", "a40"},
      {"tpu v3", "tpu-v3"}};
  for (const auto& [name, id] : names) EXPECT_EQ(db().resolve(name).spec->id, id) << name;
  EXPECT_DOUBLE_EQ(*db().resolve("AMD Instinct MI250X / MI250").spec->dense_peak(Dtype::kBf16),
                   191.5e12);
  EXPECT_DOUBLE_EQ(*db().resolve("mi250x").spec->dense_peak(Dtype::kBf16), 191.5e12);
  EXPECT_DOUBLE_EQ(*db().resolve("mi250x-oam").spec->dense_peak(Dtype::kBf16), 383e12);
  // MI350X: 2.3 PFLOP/s bf16 dense; MI355X's FP4 10.1 PFLOP/s; TPU v7x's FP8 4,614 TFLOP/s.
  EXPECT_DOUBLE_EQ(*db().resolve("mi350x").spec->dense_peak(Dtype::kBf16), 2307.2e12);
  EXPECT_DOUBLE_EQ(*db().resolve("mi355x").spec->dense_peak(Dtype::kFp4), 10066.4e12);
  EXPECT_DOUBLE_EQ(*db().resolve("tpu-v7x").spec->dense_peak(Dtype::kFp8), 4614e12);
  // H800 keeps H100's tensor rates (989.5 dense bf16) and loses FP64 (1 TFLOP/s).
  EXPECT_DOUBLE_EQ(*db().resolve("NVIDIA H800").spec->dense_peak(Dtype::kBf16), 989.5e12);
}

// TPU slice types give the chip and the count (Google Cloud TPU docs: the number counts
// TensorCores for v2-v5p, two a chip, and chips for v5e/v6e); a MIG profile "Ng" has N of the
// part's 7 compute slices (NVIDIA MIG user guide), so its peak is N/7 of the part's.
TEST(GpuDatabase, SliceNamesGiveTheChipCountOrThePeakShare) {
  const std::tuple<const char*, const char*, double> slices[] = {{"v5p-128", "tpu-v5p", 64},
                                                                 {"tpu-v4-32", "tpu-v4", 16},
                                                                 {"v3-8", "tpu-v3", 4},
                                                                 {"v5litepod-256", "tpu-v5e", 256},
                                                                 {"v6e-256", "tpu-v6e", 256}};
  for (const auto& [name, id, chips] : slices) {
    const GpuMatch m = db().resolve(name);
    EXPECT_EQ(m.spec->id, id) << name;
    ASSERT_TRUE(m.count.has_value()) << name;
    EXPECT_DOUBLE_EQ(*m.count, chips) << name;
  }
  const GpuMatch mig = db().resolve("NVIDIA A100-SXM4-40GB MIG 3g.20gb");
  EXPECT_EQ(mig.spec->id, "a100-sxm4-40gb");
  EXPECT_DOUBLE_EQ(mig.share, 3.0 / 7);
  EXPECT_FALSE(db().resolve("NVIDIA A100-SXM4-40GB").count.has_value());
  EXPECT_DOUBLE_EQ(db().resolve("NVIDIA A100-SXM4-40GB").share, 1);
}

// Descriptive names programs print resolve by the one word that names a part; a word that
// marks a variant with other peaks stops the guess (the RTX 4090 D has 114 of the 4090's 128
// SMs: reading it as a 4090 would overstate its peak by 12%).
TEST(GpuDatabase, DescriptiveNamesResolveByTheirPartWord) {
  const GpuMatch gb = db().resolve("NVIDIA Blackwell GPU (GB200)");
  EXPECT_EQ(gb.spec->id, "gb200");
  EXPECT_NE(gb.note.find("'gb200'"), std::string::npos) << gb.note;
  EXPECT_EQ(db().resolve("Tesla V100-DGXS-32GB").spec->id, "v100-sxm2");
  EXPECT_EQ(db().try_resolve("NVIDIA GeForce RTX 4090 D").spec, nullptr);
  EXPECT_EQ(db().try_resolve("NVIDIA A100 H100").spec, nullptr);  // two parts named
}

// Real device-name strings (tests/data/device_names.tsv gives where each was printed): each
// resolves to its entry, and a part without one (a laptop, a Turing "Quadro RTX 6000") is not
// guessed as a neighbour with other peaks.
TEST(GpuDatabase, ResolvesDeviceNamesAsProgramsPrintThem) {
  std::ifstream in(test::test_data("device_names.tsv"));
  ASSERT_TRUE(in) << "tests/data/device_names.tsv";
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    const auto tab2 = line.find('\t', tab + 1);
    ASSERT_NE(tab2, std::string::npos) << line;
    const std::string name = line.substr(0, tab), id = line.substr(tab + 1, tab2 - tab - 1);
    const GpuMatch m = db().try_resolve(name);
    if (id == "-") {
      EXPECT_EQ(m.spec, nullptr) << name << " -> " << (m.spec ? m.spec->id : "");
    } else {
      ASSERT_NE(m.spec, nullptr) << name;
      EXPECT_EQ(m.spec->id, id) << name;
    }
    ++rows;
  }
  EXPECT_GE(rows, 10);
}

// Issue 16's remaining parts, each against the figure its source prints (data/gpus.json names
// the source): dense = sparse / 2 where the vendor prints the sparse figure.
TEST(GpuDatabase, HoldsThePublishedPeaksOfTheRemainingParts) {
  const std::tuple<const char*, Dtype, double> peaks[] = {
      {"l20", Dtype::kBf16, 119.5e12},                       // verl get_device_flops
      {"rtx-6000-ada", Dtype::kFp8, 1457e12 / 2},            // datasheet: 1457 with sparsity
      {"rtx-6000-ada", Dtype::kFp32, 91.1e12},               // datasheet
      {"rtx-pro-6000-blackwell", Dtype::kFp4, 4000e12 / 2},  // 4000 AI TOPS with sparsity
      {"rtx-pro-6000-blackwell", Dtype::kFp32, 125e12},      // datasheet
      {"b300", Dtype::kBf16, 36e15 / 2 / 8},                 // HGX B300: 36 PF sparse, 8 GPUs
      {"gb300", Dtype::kBf16, 360e15 / 2 / 72},              // GB300 NVL72: 360 PF sparse
      {"gb300", Dtype::kFp4, 1080e15 / 72},                  // GB300 NVL72: 1,080 PF dense
      {"gb200", Dtype::kFp32, 5760e12 / 72},                 // GB200 NVL72: 5,760 TF
      {"trainium1", Dtype::kBf16, 190e12},                   // Neuron docs, per chip
      {"trainium1-neuroncore", Dtype::kBf16, 95e12},         // two NeuronCore-v2 a chip
      {"trainium2", Dtype::kFp8, 1299e12},                   // Neuron docs
      {"trainium2-lnc2", Dtype::kBf16, 667e12 / 4},          // four logical cores at LNC=2
      {"trainium3", Dtype::kFp8, 2517e12},                   // Neuron docs (MXFP8)
      {"ascend-910b", Dtype::kFp16, 354e12},                 // verl get_device_flops
      {"mi355x", Dtype::kFp6, 10066.4e12},                   // AMD: MXFP6 = MXFP4, 10.1 PF
      {"gaudi3", Dtype::kBf16, 1835e12}};                    // white paper (note: 1677 shipping)
  for (const auto& [id, dtype, flops] : peaks) {
    const auto p = db().resolve(id).spec->dense_peak(dtype);
    ASSERT_TRUE(p.has_value()) << id << " " << to_string(dtype);
    EXPECT_NEAR(*p, flops, flops * 1e-9) << id << " " << to_string(dtype);
  }
  // The shipping clock's figure is said beside the white paper's, not silently swapped in.
  const std::string note = db().resolve("gaudi3").spec->peak_note;
  EXPECT_NE(note.find("1677"), std::string::npos) << note;
  EXPECT_EQ(parse_dtype("mxfp6"), Dtype::kFp6);
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
