#pragma once
/// Quantities as people type them in a shell (`350T`, `989.5 TFLOP/s`, `330ms`, `1.2M`, `40%`)
/// and as the screen report prints them. Parsed values are plain SI numbers: FLOPs, FLOP/s,
/// seconds, counts, ratios in 0..1.
///
/// **Example**:
///   double t = mfu::parse_duration("330ms");     // 0.33
///   double f = mfu::parse_flops("35 TFLOP");     // 3.5e13
///   mfu::format_flop_rate(9.895e14);             // "989.5 TFLOP/s"

#include <string>
#include <string_view>

namespace mfu {

/// What a number means; a value written with the unit of another kind is an error.
enum class Quantity {
  kFlops,      ///< a FLOP count (`35T`, `3.5e13 FLOP`)
  kFlopRate,   ///< FLOP per second (`989.5 TFLOP/s`, `312T`, `312TF`; a bare number is refused)
  kDuration,   ///< seconds (`330ms`, `1.5h`, `2d`; a bare number other than 0 is refused)
  kRate,       ///< events per second (`1.2M`, `238.3k tok/s`)
  kCount,      ///< a plain count (`540.35B` parameters, `15T` tokens, `1024` GPUs)
  kRatio,      ///< a fraction in 0..1 (`40%` or `0.4`)
  kMoney,      ///< an amount of money (`$2.50`, `2.5`)
  kBandwidth,  ///< bytes per second (`900 GB/s`, `400Gb/s`; a bare number is refused)
};

/// Human name of a quantity kind ("a time", "a FLOP count", ...), for messages.
[[nodiscard]] const char* describe(Quantity kind);

/// Parses `text` as a quantity of `kind`. Throws mfu::Error naming the text and the expected
/// kind when the text is not a number, has a unit of another kind, or is NaN/inf.
/// Negative values are rejected except for kRatio deltas (never: ratios are 0..1 too).
[[nodiscard]] double parse_quantity(std::string_view text, Quantity kind);

[[nodiscard]] inline double parse_flops(std::string_view t) {
  return parse_quantity(t, Quantity::kFlops);
}
[[nodiscard]] inline double parse_flop_rate(std::string_view t) {
  return parse_quantity(t, Quantity::kFlopRate);
}
[[nodiscard]] inline double parse_duration(std::string_view t) {
  return parse_quantity(t, Quantity::kDuration);
}
[[nodiscard]] inline double parse_rate(std::string_view t) {
  return parse_quantity(t, Quantity::kRate);
}
[[nodiscard]] inline double parse_count(std::string_view t) {
  return parse_quantity(t, Quantity::kCount);
}
[[nodiscard]] inline double parse_ratio(std::string_view t) {
  return parse_quantity(t, Quantity::kRatio);
}

/// A what-if scale: `0.5x` multiplies, `0` removes, `80%` keeps 80%. Returns the multiplier.
[[nodiscard]] double parse_scale(std::string_view text);

/// `1.2 PFLOP`, `35 TFLOP`.
[[nodiscard]] std::string format_flops(double flops);
/// `989.5 TFLOP/s`.
[[nodiscard]] std::string format_flop_rate(double flops_per_s);
/// `330 ms`, `13.75 s`, `42.0 min`, `1.50 h`, `2.0 d`.
[[nodiscard]] std::string format_duration(double seconds);
/// `238.3k`, `1.20M`, `8.03B`, `15.0T` (no unit).
[[nodiscard]] std::string format_count(double value);
/// `1.2 GB` (decimal prefixes, as NCCL and datasheets quote sizes).
[[nodiscard]] std::string format_bytes(double bytes);
/// `450 GB/s`.
[[nodiscard]] std::string format_bandwidth(double bytes_per_s);
/// `34.0%` for 0.34.
[[nodiscard]] std::string format_percent(double ratio, int decimals = 1);
/// `$12.34`; from $1,000 on whole dollars with thousands separators: `$1,089,632`. The currency
/// is the one the price was given in (mfu converts none).
[[nodiscard]] std::string format_money(double amount);
/// A quantity people read as a figure: 4 significant digits below 10,000, whole with thousands
/// separators from there ("7.617", "266,667").
[[nodiscard]] std::string format_figure(double value);
/// `1 GPU`, `8 GPUs`, `1 iteration`: the count and the noun, plural unless the count is one.
[[nodiscard]] std::string count_of(double n, std::string_view noun);
/// GPU time readable at any size: `7.617 GPU-hours`; below 0.1 GPU-hours `8.3 GPU-minutes` or
/// `9.0 GPU-seconds` instead of `2.5e-06 GPU-hours`.
[[nodiscard]] std::string format_gpu_time(double gpu_hours);
/// Significant-digit formatting of a plain number (`0.330`, `1.2e+09` avoided: `1200000000`).
[[nodiscard]] std::string format_number(double value, int significant = 4);

}  // namespace mfu
