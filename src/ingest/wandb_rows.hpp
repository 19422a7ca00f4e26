#pragma once
// One W&B history row (a wandb.log() call) to a record, shared by wandb-history.jsonl and the
// CSV exports of the same history: the row's keys as W&B stores them ("_step", "_runtime",
// "train/loss", ...), numbers only.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "ingest/parser.hpp"

namespace mfu::detail {

class WandbRows {
 public:
  explicit WandbRows(RunBuilder& out) : out_(out) {}
  /// Adds the record of one row: the training steps since the previous row, timed by the
  /// growth of _runtime, or by a per-step time the row logs when it has no _runtime.
  void row(const nlohmann::json& j, std::uint64_t line);

 private:
  RunBuilder& out_;
  double last_step_ = 0, last_runtime_ = 0;
  std::int64_t last_logged_ = -1;
};

}  // namespace mfu::detail
