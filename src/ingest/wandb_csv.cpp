// Weights & Biases history as CSV, in the two layouts users download:
//   the run's history (the web UI's export, or `run.history().to_csv()`, which adds an unnamed
//     index column): "_step,_runtime,_timestamp,train/loss,..." with a row per wandb.log() call;
//   a chart's data ("Download CSV" on a panel): "Step","<run> - <metric>",
//     "<run> - <metric>__MIN","<run> - <metric>__MAX" (the bounds of a sampled point; only the
//     first run of a chart with several is read, and the others are named).
// Each row becomes the W&B row it was (wandb_rows.hpp): the steps since the previous row,
// timed by _runtime's growth, or by a per-step time or throughput the row logs.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "ingest/parser.hpp"
#include "ingest/wandb_rows.hpp"
#include "io/csv.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

constexpr std::string_view kRunSeparator = " - ";

bool chart_header(const std::vector<std::string>& cols) {
  return cols.size() >= 2 && cols[0] == "Step" && contains(cols[1], kRunSeparator);
}

bool history_header(const std::vector<std::string>& cols) {
  bool step = false, runtime = false;
  for (const auto& c : cols) {
    step = step || c == "_step";
    runtime = runtime || c == "_runtime";
  }
  return step && runtime;
}

class WandbCsvParser : public LineParser {
 public:
  explicit WandbCsvParser(RunBuilder& out) : out_(out), rows_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    if (t.empty()) return;
    auto cells = split_csv(t);
    if (keys_.empty()) return header(cells, number);
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t i = 0; i < cells.size() && i < keys_.size(); ++i) {
      if (keys_[i].empty()) continue;
      if (auto v = parse_double(trim(cells[i])); v && std::isfinite(*v)) j[keys_[i]] = *v;
    }
    if (!j.contains("_step")) {
      out_.malformed(number, "a W&B CSV row without its step");
      return;
    }
    rows_.row(j, number);
  }

 private:
  /// The W&B key of each column ("" for one that is not read).
  void header(const std::vector<std::string>& cols, std::uint64_t number) {
    keys_.assign(cols.size(), "");
    if (chart_header(cols)) return chart_columns(cols, number);
    for (std::size_t i = 0; i < cols.size(); ++i) keys_[i] = cols[i];
    keys_[0] = cols[0].empty() ? "" : cols[0];  // pandas' unnamed index column
  }

  void chart_columns(const std::vector<std::string>& cols, std::uint64_t number) {
    keys_[0] = "_step";
    const std::string run = cols[1].substr(0, cols[1].find(kRunSeparator));
    std::set<std::string> others;
    for (std::size_t i = 1; i < cols.size(); ++i) {
      const std::size_t sep = cols[i].find(kRunSeparator);
      if (sep == std::string::npos) continue;
      const std::string metric = cols[i].substr(sep + kRunSeparator.size());
      if (ends_with(metric, "__MIN") || ends_with(metric, "__MAX")) continue;
      if (cols[i].substr(0, sep) != run) {
        others.insert(cols[i].substr(0, sep));
        continue;
      }
      keys_[i] = metric;
    }
    out_.meta("wandb_run", run, number, false);
    if (!others.empty())
      out_.warn(number, fmt::format("the chart holds {} runs: only '{}' is read (the others: {})",
                                    others.size() + 1, run, fmt::join(others, ", ")));
  }

  RunBuilder& out_;
  WandbRows rows_;
  std::vector<std::string> keys_;
};

double sniff_wandb_csv(std::string_view head, std::string_view filename) {
  const std::string_view first = trim(head.substr(0, head.find('\n')));
  if (first.empty() || first.front() == '{') return 0;
  const auto cols = split_csv(first);
  const double named = contains(filename, "wandb") ? 1 : 0;
  if (chart_header(cols)) return 6 + named;
  if (history_header(cols)) return 6 + named;
  return 0;
}

}  // namespace

const FormatSpec& wandb_csv_format() {
  static const FormatSpec spec{"wandb-csv",
                               "Weights & Biases history or chart CSV (_step/_runtime columns, "
                               "or \"Step\",\"<run> - <metric>\")",
                               sniff_wandb_csv,
                               make_line_parser<WandbCsvParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kAveraged,
                               nullptr,
                               false,
                               true};
  return spec;
}

}  // namespace mfu::detail
