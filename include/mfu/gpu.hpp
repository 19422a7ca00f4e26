#pragma once
/// The accelerator database: dense peak FLOP/s per dtype, memory, interconnect and power for
/// each accelerator, each number with its source. Built into the binary from data/gpus.json;
/// `--gpu-db FILE` or `MFU_GPU_DB` adds or overrides entries.
///
/// **Example**:
///   auto db = mfu::GpuDatabase::builtin();
///   auto m = db.resolve("NVIDIA H100 80GB HBM3");      // the name nvidia-smi prints
///   double peak = m.spec->dense_peak(mfu::Dtype::kBf16); // 9.895e14 FLOP/s

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mfu {

/// Number formats a peak is quoted for. fp64_tensor and fp32_matrix are the matrix-unit rates.
enum class Dtype {
  kFp64,
  kFp64Tensor,
  kFp32,
  kFp32Matrix,
  kTf32,
  kBf16,
  kFp16,
  kFp8,
  kInt8,
  kFp6,
  kFp4,
  kInt4
};

/// "bf16", "fp8", ... Throws mfu::Error for an unknown name (accepts "bfloat16", "float16",
/// "fp32").
[[nodiscard]] Dtype parse_dtype(std::string_view name);
[[nodiscard]] const char* to_string(Dtype d);

struct GpuSpec {
  std::string id;    ///< canonical key, e.g. "h100-sxm"
  std::string name;  ///< display name, e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;
  std::vector<std::string> aliases;
  std::map<Dtype, double> dense_flops;   ///< FLOP/s, dense (what MFU uses)
  std::map<Dtype, double> sparse_flops;  ///< FLOP/s with 2:4 sparsity; never used for MFU
  double memory_bytes = 0;
  double memory_bandwidth = 0;        ///< bytes/s
  std::string interconnect;           ///< "NVLink 4", "PCIe Gen5 x16", "ICI"
  double interconnect_bandwidth = 0;  ///< bytes/s per accelerator, as the vendor states it
  std::optional<double> tdp_w;        ///< watts; empty when the vendor publishes none
  std::string source;
  std::string interconnect_source;
  /// What a user should know before trusting the table's peak (a shipping clock below the
  /// white paper's, peaks per chip where a log counts cores); empty when nothing.
  std::string peak_note;

  /// Dense peak for `d`, or nullopt when the vendor publishes none.
  [[nodiscard]] std::optional<double> dense_peak(Dtype d) const;
};

/// The result of resolving a name typed by a user or printed by a tool.
struct GpuMatch {
  const GpuSpec* spec = nullptr;
  /// Non-empty when the name matched several parts and the documented default was chosen,
  /// or when the name is a slice (below).
  std::string note;
  /// Chips a TPU slice type names ("v5p-128" is 64 chips: v2-v5p count two TensorCores a
  /// chip, v5e and v6e one).
  std::optional<double> count;
  /// The share of the part's peak a MIG slice has ("MIG 3g.20gb": 3 of the 7 compute slices).
  double share = 1;
};

class GpuDatabase {
 public:
  /// The database compiled into the binary.
  [[nodiscard]] static const GpuDatabase& builtin();
  /// builtin() plus the file named by `path` (or by MFU_GPU_DB when `path` is empty).
  [[nodiscard]] static GpuDatabase load(const std::string& path = {});

  /// Adds or replaces entries from a JSON document with the layout of data/gpus.json.
  /// `origin` names the file in error messages. Throws mfu::Error on malformed input.
  void merge_json(std::string_view json_text, const std::string& origin);

  /// Resolves what people type (`h100`, `H100-SXM`, `h100_sxm5`, `a100-80g`, `tpu-v5p`) and
  /// what tools print (`NVIDIA H100 80GB HBM3`). Never matches by substring, so `L40S` is not
  /// `L4`. Throws mfu::Error listing the closest names when nothing matches.
  [[nodiscard]] GpuMatch resolve(std::string_view query) const;
  /// Like resolve() but returns an empty match instead of throwing.
  [[nodiscard]] GpuMatch try_resolve(std::string_view query) const;
  /// The closest known names to `query`, best first.
  [[nodiscard]] std::vector<std::string> suggestions(std::string_view query,
                                                     std::size_t n = 3) const;

  [[nodiscard]] const std::vector<GpuSpec>& all() const { return specs_; }
  [[nodiscard]] const std::map<std::string, std::string>& defaults() const { return defaults_; }

 private:
  /// A part's own name or alias (no slice).
  [[nodiscard]] GpuMatch try_resolve_name(std::string_view query) const;
  std::vector<GpuSpec> specs_;
  std::map<std::string, std::string> defaults_;  // normalized family name -> id
};

/// Lower-cases and drops vendor words and separators: "NVIDIA H100-SXM5" -> "h100sxm5".
[[nodiscard]] std::string normalize_gpu_name(std::string_view name);

}  // namespace mfu
