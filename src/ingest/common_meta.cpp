#include "ingest/common_meta.hpp"

#include <fmt/format.h>

#include "text.hpp"

namespace mfu::detail {

void CommonMetaScanner::scan(std::string_view line, std::uint64_t number, RunBuilder& out) {
  if (line.size() < 8) return;
  // nvidia-smi: "|   0  NVIDIA H100 80GB HBM3          On  | 00000000:61:00.0 Off |"
  if (line.front() == '|' && line.size() > 20) {
    if (contains(line, "GPU  Name")) {
      in_smi_ = true;
      smi_gpus_ = 0;
      smi_line_ = number;
      return;
    }
    if (in_smi_) {
      std::string_view cell = line.substr(1);
      const std::size_t bar = cell.find('|');
      cell = trim(cell.substr(0, bar));
      // "0  NVIDIA H100 80GB HBM3          On"
      std::size_t i = 0;
      while (i < cell.size() && cell[i] >= '0' && cell[i] <= '9') ++i;
      if (i > 0 && i < cell.size() && cell[i] == ' ') {
        std::string_view name = trim(cell.substr(i));
        for (std::string_view tail : {std::string_view(" On"), std::string_view(" Off")}) {
          if (ends_with(name, tail)) name = trim(name.substr(0, name.size() - tail.size()));
        }
        if (!name.empty() &&
            (contains(name, "NVIDIA") || contains(name, "Tesla") || contains(name, "GeForce") ||
             contains(name, "Quadro") || contains(name, "RTX"))) {
          ++smi_gpus_;
          out.meta("gpu_name", std::string(name), number, false);
        }
      }
    }
    if (contains(line, "Processes:")) in_smi_ = false;
    return;
  }
  if (in_smi_ && line.front() == '+') return;
  if (in_smi_ && line.front() != '|' && line.front() != '+') in_smi_ = false;

  // torchtitan / torch: "CUDA capacity: NVIDIA GeForce RTX 5090 with 31.36GiB memory"
  if (const std::size_t p = line.find("CUDA capacity: "); p != std::string_view::npos) {
    std::string_view rest = line.substr(p + 15);
    const std::size_t w = rest.find(" with ");
    out.meta("gpu_name", std::string(trim(rest.substr(0, w))), number, false);
    return;
  }
  // DeepSpeed launcher: "dist_world_size=8"
  if (const std::size_t p = line.find("dist_world_size="); p != std::string_view::npos) {
    if (auto v = number_after(line.substr(p), "dist_world_size="))
      out.meta("gpus", *v, number, false);
    return;
  }
  // Generic "world_size: 8" / "world size: 8" (ms-swift, HF args dumps).
  if (const std::size_t p = line.find("world_size"); p != std::string_view::npos && p < 40) {
    std::string_view rest = line.substr(p + 10);
    if (!rest.empty() && (rest.front() == ':' || rest.front() == '=' || rest.front() == ' ')) {
      if (auto v = number_after(line.substr(p), "world_size"); v && *v >= 1 && *v < 1e7)
        out.meta("gpus", *v, number, false);
    }
  }
}

void CommonMetaScanner::finish(RunBuilder& out) {
  if (smi_gpus_ > 0) out.meta("gpus_visible", static_cast<double>(smi_gpus_), smi_line_, false);
}

}  // namespace mfu::detail
