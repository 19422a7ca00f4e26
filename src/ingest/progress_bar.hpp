#pragma once
// tqdm progress bars as Hugging Face, PyTorch Lightning and NeMo print them:
//   " 9%|▉   | 500/5490 [03:54<39:02,  2.13it/s]"
//   "Epoch 0: : 100%|██████████| 50/50 [31:51<00:00, reduced_train_loss=6.130, global_step=50.0]"
// Inside the brackets: elapsed<remaining, then the rate ("2.13it/s", "41.36s/it") unless the
// bar's postfix (Lightning's logged metrics, "key=value" separated by ", ") replaces it.

#include <optional>
#include <string_view>

namespace mfu::detail {

/// "03:54", "1:02:03" or "159:06:22" (tqdm's elapsed format) -> seconds.
[[nodiscard]] std::optional<double> clock_time(std::string_view s);

/// One redraw of a bar.
struct BarUpdate {
  double n = 0, total = 0, elapsed_s = 0;
  /// What follows elapsed<remaining inside the brackets (the rate, or Lightning's postfix), a
  /// view into the line.
  std::string_view rest;
};

[[nodiscard]] std::optional<BarUpdate> parse_bar(std::string_view line);

/// The bar's rate as seconds per step: "2.80it/s" -> 0.357, "20.91s/it" -> 20.91; none for a
/// postfix or "?it/s". tqdm smooths it (an exponential moving average of recent updates).
[[nodiscard]] std::optional<double> bar_seconds_per_step(const BarUpdate& b);

}  // namespace mfu::detail
