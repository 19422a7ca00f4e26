// Renders `mfu whatif` results: a projection beside the measurement, an analytical estimate,
// and the two placements of a cluster replay. Text and markdown share one table of rows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"
#include "report/json_numbers.hpp"

namespace mfu {
namespace {

using Row = std::vector<std::string>;

void print_table(const std::vector<Row>& rows, OutputFormat format, std::ostream& out) {
  if (rows.empty()) return;
  std::size_t cols = 0;
  for (const auto& r : rows) cols = std::max(cols, r.size());
  if (format == OutputFormat::kMarkdown) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out << "|";
      for (std::size_t c = 0; c < cols; ++c)
        out << " " << (c < rows[i].size() ? rows[i][c] : "") << " |";
      out << "\n";
      if (i == 0) {
        out << "|";
        for (std::size_t c = 0; c < cols; ++c) out << (c == 0 ? "---|" : "---:|");
        out << "\n";
      }
    }
    out << "\n";
    return;
  }
  std::vector<std::size_t> width(cols, 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows) {
    std::string line = "  ";
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (c == 0)
        line += fmt::format("{:<{}}", r[c], width[c] + 2);
      else
        line += fmt::format("{:>{}}", r[c], width[c] + 2);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "\n";
}

std::string opt_pct(const std::optional<double>& v) {
  return v ? format_percent(*v) : "-";
}
std::string opt_dur(const std::optional<double>& v) {
  return v ? format_duration(*v) : "-";
}

std::string change_text(double before, double after) {
  if (!std::isfinite(before) || !std::isfinite(after) || before == 0) return "";
  const double r = after / before - 1.0;
  if (std::fabs(r) < 5e-4) return "=";
  return fmt::format("{:+.1f}%", r * 100.0);
}

std::string change_pp(const std::optional<double>& before, const std::optional<double>& after) {
  if (!before || !after) return "";
  const double d = (*after - *before) * 100.0;
  if (std::fabs(d) < 0.05) return "=";
  return fmt::format("{:+.1f} pp", d);
}

nlohmann::json numbers_json(const ProjectedNumbers& n) {
  nlohmann::json j;
  j["step_time_s"] = n.step_time_s;
  j["mfu"] = n.mfu ? nlohmann::json(*n.mfu) : nlohmann::json();
  j["mfu_run"] = n.mfu_run ? nlohmann::json(*n.mfu_run) : nlohmann::json();
  j["tokens_per_s"] = n.tokens_per_s ? nlohmann::json(*n.tokens_per_s) : nlohmann::json();
  j["wall_time_s"] = n.wall_time_s;
  j["gpus"] = detail::json_count(n.gpus);
  j["peak_flops_per_s_per_gpu"] =
      std::isfinite(n.peak_flops_per_gpu) ? nlohmann::json(n.peak_flops_per_gpu) : nlohmann::json();
  j["gpu"] = n.gpu;
  if (n.train_time_s) j["train_time_s"] = *n.train_time_s;
  if (n.gpu_hours) j["gpu_hours"] = *n.gpu_hours;
  if (n.cost) j["cost_usd"] = *n.cost;
  j["step_split_s"] = n.step;
  j["run_buckets_s"] = n.run;
  return j;
}

void text_lines(const char* title, const std::vector<std::string>& lines, OutputFormat format,
                std::ostream& out) {
  if (lines.empty()) return;
  out << (format == OutputFormat::kMarkdown ? fmt::format("**{}**\n\n", title)
                                            : fmt::format("{}:\n", title));
  for (const auto& l : lines)
    out << (format == OutputFormat::kMarkdown ? "- " : "  - ") << l << "\n";
  out << "\n";
}

void require_text_json_md(OutputFormat format) {
  if (format == OutputFormat::kCsv || format == OutputFormat::kHtml ||
      format == OutputFormat::kSummary)
    throw Error("mfu whatif writes text, json or markdown",
                fmt::format("give {} text, json or markdown", input_phrase(Input::kOutputFormat)));
}

}  // namespace

void render_projection(const Projection& p, const std::string& title, OutputFormat format,
                       std::ostream& out) {
  require_text_json_md(format);
  const ProjectedNumbers &m = p.measured, &q = p.projected;
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["kind"] = "projection";
    j["input"] = title;
    j["measured"] = numbers_json(m);
    j["projected"] = numbers_json(q);
    j["changes"] = p.explanations;
    j["notes"] = p.notes;
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << (format == OutputFormat::kMarkdown ? "### mfu whatif: " : "mfu whatif: ") << title
      << "\n\n";
  std::vector<Row> rows{{"", "measured", "projected", "change"}};
  rows.push_back({"step time (steady mean)", format_duration(m.step_time_s),
                  format_duration(q.step_time_s), change_text(m.step_time_s, q.step_time_s)});
  if (m.mfu || q.mfu)
    rows.push_back({"MFU (steady step)", opt_pct(m.mfu), opt_pct(q.mfu), change_pp(m.mfu, q.mfu)});
  if (m.mfu_run || q.mfu_run)
    rows.push_back({"MFU (whole run)", opt_pct(m.mfu_run), opt_pct(q.mfu_run),
                    change_pp(m.mfu_run, q.mfu_run)});
  if (m.tokens_per_s && q.tokens_per_s)
    rows.push_back({"tokens/s", format_count(*m.tokens_per_s), format_count(*q.tokens_per_s),
                    change_text(*m.tokens_per_s, *q.tokens_per_s)});
  rows.push_back({"wall time of the logged run", format_duration(m.wall_time_s),
                  format_duration(q.wall_time_s), change_text(m.wall_time_s, q.wall_time_s)});
  if (std::isfinite(m.gpus) || std::isfinite(q.gpus))
    rows.push_back({"GPUs", format_number(m.gpus, 6), format_number(q.gpus, 6), ""});
  if (m.gpu != q.gpu || m.peak_flops_per_gpu != q.peak_flops_per_gpu)
    rows.push_back({"accelerator", m.gpu.empty() ? format_flop_rate(m.peak_flops_per_gpu) : m.gpu,
                    q.gpu.empty() ? format_flop_rate(q.peak_flops_per_gpu) : q.gpu, ""});
  if (m.train_time_s || q.train_time_s)
    rows.push_back(
        {"time to train", opt_dur(m.train_time_s), opt_dur(q.train_time_s),
         m.train_time_s && q.train_time_s ? change_text(*m.train_time_s, *q.train_time_s) : ""});
  if (m.gpu_hours && q.gpu_hours)
    rows.push_back({m.train_time_s ? "GPU time to train" : "GPU time",
                    format_gpu_time(*m.gpu_hours), format_gpu_time(*q.gpu_hours),
                    change_text(*m.gpu_hours, *q.gpu_hours)});
  if (m.cost && q.cost)
    rows.push_back(
        {"cost", format_money(*m.cost), format_money(*q.cost), change_text(*m.cost, *q.cost)});
  print_table(rows, format, out);

  text_lines("changes", p.explanations, format, out);

  std::vector<Row> split{{"per step", "measured", "projected", ""}};
  for (std::size_t id = 0; id < kBucketCount; ++id) {
    const BucketInfo& info = bucket_info(static_cast<BucketId>(id));
    const std::string b = info.key;
    auto get = [&](const std::map<std::string, double>& s) {
      auto it = s.find(b);
      return it == s.end() ? 0.0 : it->second;
    };
    const double x = get(m.step), y = get(q.step);
    if (x <= 0 && y <= 0) continue;
    split.push_back({info.label, format_duration(x), format_duration(y), change_text(x, y)});
  }
  print_table(split, format, out);
  text_lines("notes", p.notes, format, out);
}

void render_estimate(const StepEstimate& e, const std::vector<ScalingPoint>& scaling,
                     const std::string& title, OutputFormat format, std::ostream& out) {
  require_text_json_md(format);
  if (format == OutputFormat::kJson) {
    auto one = [](const StepEstimate& s) {
      nlohmann::json j;
      j["step_time_s"] = s.step_time_s;
      j["compute_s"] = s.compute_s;
      j["ideal_s"] = s.ideal_s;
      j["tp_comm_s"] = s.tp_comm_s;
      j["dp_comm_s"] = s.dp_comm_s;
      j["dp_exposed_s"] = s.dp_exposed_s;
      j["bubble_s"] = s.bubble_s;
      j["mfu"] = s.mfu;
      j["tokens_per_s"] = s.tokens_per_s;
      j["dp"] = s.dp;
      j["micro_batches"] = s.micro_batches;
      if (s.checkpoint_interval_s) j["checkpoint_interval_s"] = *s.checkpoint_interval_s;
      if (s.failure_loss_fraction) j["failure_loss_fraction"] = *s.failure_loss_fraction;
      return j;
    };
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["kind"] = "estimate";
    j["setup"] = title;
    j["estimate"] = one(e);
    j["formulas"] = e.lines;
    j["scaling_at_fixed_global_batch"] = nlohmann::json::array();
    for (const auto& pt : scaling) {
      auto x = one(pt.estimate);
      x["gpus"] = detail::json_count(pt.gpus);
      j["scaling_at_fixed_global_batch"].push_back(x);
    }
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << (format == OutputFormat::kMarkdown ? "### mfu whatif (analytical): "
                                            : "mfu whatif (analytical): ")
      << title << "\n\n";
  std::vector<Row> rows{{"step time", format_duration(e.step_time_s), "100%"}};
  auto part = [&](const char* name, double s) {
    if (s > 0) rows.push_back({name, format_duration(s), format_percent(s / e.step_time_s)});
  };
  part("  compute (at the assumed kernel efficiency)", e.compute_s);
  part("  tensor-parallel all-reduces", e.tp_comm_s);
  part("  pipeline bubble", e.bubble_s);
  part("  data-parallel gradient sync, exposed", e.dp_exposed_s);
  rows.push_back({"MFU", format_percent(e.mfu), ""});
  rows.push_back({"tokens/s", format_count(e.tokens_per_s), ""});
  if (e.checkpoint_interval_s)
    rows.push_back({"checkpoint every (Daly)", format_duration(*e.checkpoint_interval_s), ""});
  if (e.failure_loss_fraction) {
    rows.push_back(
        {"lost to checkpoints and failures", format_percent(*e.failure_loss_fraction), ""});
    rows.push_back({"MFU after that loss",
                    format_percent(e.mfu * (1.0 - std::min(1.0, *e.failure_loss_fraction))), ""});
  }
  if (format == OutputFormat::kMarkdown) rows.insert(rows.begin(), Row{"", "time", "share"});
  print_table(rows, format, out);
  text_lines("how", e.lines, format, out);
  if (scaling.size() > 1) {
    out << (format == OutputFormat::kMarkdown
                ? "**data-parallel scaling at the same global batch**\n\n"
                : "data-parallel scaling at the same global batch:\n");
    std::vector<Row> t{{"GPUs", "DP", "micro-batches", "step", "MFU", "tokens/s"}};
    for (const auto& pt : scaling)
      t.push_back({format_number(pt.gpus, 6), format_number(pt.estimate.dp, 6),
                   format_number(pt.estimate.micro_batches, 6),
                   format_duration(pt.estimate.step_time_s), format_percent(pt.estimate.mfu),
                   format_count(pt.estimate.tokens_per_s)});
    print_table(t, format, out);
  }
  out << (format == OutputFormat::kMarkdown ? "_" : "  ")
      << "An estimate from first-order models; measure a run and use `mfu whatif run.log` for "
         "numbers that count."
      << (format == OutputFormat::kMarkdown ? "_" : "") << "\n";
}

void render_cluster(const ClusterReport& r, OutputFormat format, std::ostream& out) {
  require_text_json_md(format);
  if (format == OutputFormat::kJson) {
    auto one = [](const ClusterResult& c) {
      nlohmann::json j;
      j["makespan_s"] = c.makespan_s;
      j["fragmentation_idle_gpu_hours"] = c.fragmentation_idle_gpu_h;
      j["fragmentation_blocked_jobs"] = c.fragmentation_blocked_jobs;
      j["mean_wait_s"] = c.mean_wait_s;
      j["max_wait_s"] = c.max_wait_s;
      j["utilization"] = c.utilization;
      j["jobs"] = c.jobs;
      j["unschedulable_jobs"] = c.unschedulable;
      return j;
    };
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["kind"] = "cluster";
    j["jobs_file"] = r.origin;
    j["nodes"] = r.nodes;
    j["gpus_per_node"] = r.gpus_per_node;
    j["rows"] = r.rows;
    j["zero_gpu_jobs"] = r.zero_gpu_jobs;
    j["spread"] = one(r.spread);
    j["pack"] = one(r.pack);
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << (format == OutputFormat::kMarkdown ? "### " : "")
      << fmt::format(
             "mfu whatif cluster: {} nodes x {} GPUs, {} jobs from {} (first come first served, no "
             "backfilling)",
             r.nodes, r.gpus_per_node, r.spread.jobs, r.origin)
      << "\n\n";
  auto gpu_h = [](double h) { return h == 0 ? std::string("0") : format_number(h, 4); };
  std::vector<Row> rows{{"", "spread (most free)", "pack (best fit)"}};
  rows.push_back({"idle to fragmentation (GPU-h)", gpu_h(r.spread.fragmentation_idle_gpu_h),
                  gpu_h(r.pack.fragmentation_idle_gpu_h)});
  rows.push_back({"jobs delayed by fragmentation",
                  std::to_string(r.spread.fragmentation_blocked_jobs),
                  std::to_string(r.pack.fragmentation_blocked_jobs)});
  rows.push_back({"mean queueing delay", format_duration(r.spread.mean_wait_s),
                  format_duration(r.pack.mean_wait_s)});
  rows.push_back({"max queueing delay", format_duration(r.spread.max_wait_s),
                  format_duration(r.pack.max_wait_s)});
  rows.push_back(
      {"utilisation", format_percent(r.spread.utilization), format_percent(r.pack.utilization)});
  rows.push_back(
      {"makespan", format_duration(r.spread.makespan_s), format_duration(r.pack.makespan_s)});
  print_table(rows, format, out);
  std::vector<std::string> notes;
  if (r.zero_gpu_jobs > 0)
    notes.push_back(fmt::format("{} rows asked for no GPU and were left out", r.zero_gpu_jobs));
  if (r.spread.unschedulable > 0)
    notes.push_back(fmt::format("{} jobs need more GPUs than the cluster has and were left out",
                                r.spread.unschedulable));
  notes.push_back(
      "idle to fragmentation: free GPU time while the job at the head of the queue needed no more "
      "GPUs "
      "than were free in the cluster as a whole, but no node (or set of whole free nodes) could "
      "take it");
  text_lines("notes", notes, format, out);
}

}  // namespace mfu
