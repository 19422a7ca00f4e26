#pragma once
// Reading a step line of a framework nobody listed: the line is cut into fields ("key: value",
// "key=value", "key value unit", "value unit"; separated by '|', ';', ',', tabs or wide spaces),
// and each field's name and unit are matched against one table of what frameworks call a step
// counter, a step time, an elapsed clock, a throughput, TFLOP/s, MFU and a loss.

#include <optional>
#include <string>
#include <string_view>

namespace mfu::detail {

/// One matched field: the key as the line spells it (or its unit, for "5.59 seconds/step").
struct MatchedField {
  std::string name;
  double value = 0;
};

/// What the fields of one line say.
struct StepFields {
  std::optional<MatchedField> step;
  std::optional<MatchedField> time_s;     ///< seconds of one step
  std::optional<MatchedField> elapsed_s;  ///< seconds since the run began (cumulative)
  std::optional<MatchedField> tokens_per_s;
  std::optional<MatchedField> tokens_per_s_per_gpu;
  std::optional<MatchedField> samples_per_s;
  std::optional<MatchedField> tflops_per_gpu;
  std::optional<MatchedField> mfu;  ///< a fraction
  std::optional<MatchedField> loss;

  /// A step counter and something that times it.
  [[nodiscard]] bool fits() const {
    return step && (time_s || elapsed_s || tokens_per_s || tokens_per_s_per_gpu || samples_per_s ||
                    tflops_per_gpu);
  }
  /// The names used, "step=iter time=iter_time(s) ...": lines of one format share it.
  [[nodiscard]] std::string signature() const;
};

[[nodiscard]] StepFields read_step_fields(std::string_view line);

}  // namespace mfu::detail
