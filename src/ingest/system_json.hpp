#pragma once
// MLPerf system descriptions (<submitter>/systems/<system>.json and :::SYSJSON lines).
#include <nlohmann/json.hpp>

#include "ingest/parser.hpp"

namespace mfu::detail {

/// Records the accelerator name and count (accelerators_per_node x number_of_nodes).
void apply_system_json(const nlohmann::json& j, std::uint64_t line, RunBuilder& out);

}  // namespace mfu::detail
