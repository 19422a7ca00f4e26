#pragma once
// Data files compiled into the binary (generated from data/ by cmake/embed_data.cmake).
#include <string_view>

namespace mfu::detail {
[[nodiscard]] std::string_view embedded_gpus_json();
[[nodiscard]] std::string_view embedded_models_json();
}  // namespace mfu::detail
