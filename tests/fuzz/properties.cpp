#include "properties.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string_view>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/scheduler.hpp"
#include "mfu/summary.hpp"
#include "mfu/units.hpp"
#include "mfu/whatif.hpp"
#include "text.hpp"

namespace mfu::fuzz {
namespace {

bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

void check_run(const Run& run) {
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration it = run.iterations[i];
    require(it.count >= 1, "a record stands for no iteration");
    require(std::isnan(it.time_s) || (it.time_s > 0 && std::isfinite(it.time_s)) || it.time_s <= 0,
            "time is infinite");
    require(it.step >= -1, "negative step");
  }
  require(run.diagnostics.size() <= 64, "diagnostics are not capped");
}

/// The wall time against a second code path: without the log's clock it lies between the sum
/// of the durations of the records the analysis kept and that plus every event's duration.
void check_wall_time(const Run& run, const Analysis& a) {
  if (a.clock_source != "the record durations") return;
  double records = 0, events = 0;
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration it = run.iterations[i];
    const std::uint8_t f = i < a.record_flags.size() ? a.record_flags[i] : 0;
    if (f & (kRecordOutlier | kRecordUntimed)) continue;
    records += it.time_s * (it.count == 0 ? 1 : it.count);
  }
  for (const auto& e : run.events)
    if (e.kind != EventKind::kRestart && std::isfinite(e.duration_s) && e.duration_s > 0)
      events += e.duration_s;
  const double eps = 1e-9 * std::max(1.0, records + events);
  require(a.wall_time_s >= records - eps, "wall time below the records' durations");
  require(a.wall_time_s <= records + events + eps, "wall time above records plus events");
}

void check_analysis(const Run& run) {
  AnalyzeOptions o;
  o.peak_flops = 1e15;
  o.gpus = 8;
  Analysis a;
  try {
    a = analyze(run, o);
  } catch (const Error&) {
    return;  // impossible inputs are refused: that is the contract
  }
  for (const auto& b : a.buckets)
    require(b.seconds >= 0 && std::isfinite(b.seconds), "a bucket is negative or infinite");
  try {
    verify_attribution(a);
  } catch (const InternalError& e) {
    throw PropertyViolation(e.what());
  }
  check_wall_time(run, a);
  if (a.mfu) require(*a.mfu >= 0 && *a.mfu <= 1.0 + 1e-9, "MFU outside 0..1");
  if (a.mfu_steady)
    require(*a.mfu_steady >= 0 && *a.mfu_steady <= 1.0 + 1e-9, "steady MFU outside 0..1");
}

/// The analysis of the run and of its native copy: the same answer (or the same refusal).
/// A copy of records that are not in line order (restarts and swapped lines mixed) placed an
/// event elsewhere until events were given slots among the records (place_events); 240 s of
/// fuzzing each native target with the check found nothing more, and it is on in every run
/// now (MFU_FUZZ_COPY_ANALYSIS=0 leaves it out).
void check_copy_analysis(const Run& run, const Run& back) {
  static const bool wanted = [] {
    const char* v = std::getenv("MFU_FUZZ_COPY_ANALYSIS");
    return v == nullptr || std::string_view(v) != "0";
  }();
  if (!wanted) return;
  AnalyzeOptions o;
  o.peak_flops = 1e15;
  o.gpus = 8;
  std::optional<Analysis> a, b;
  try {
    a = analyze(run, o);
  } catch (const Error&) {
  }
  try {
    b = analyze(back, o);
  } catch (const Error&) {
  }
  require(a.has_value() == b.has_value(), "the copy is refused where the run is not, or back");
  if (!a) return;
  auto close = [](double x, double y) {
    return same(x, y) || std::fabs(x - y) <= 1e-9 * std::max(1.0, std::fabs(x));
  };
  require(close(a->wall_time_s, b->wall_time_s), "the copy's wall time differs");
  for (std::size_t k = 0; k < a->buckets.size() && k < b->buckets.size(); ++k)
    require(close(a->buckets[k].seconds, b->buckets[k].seconds),
            "the copy's " + a->buckets[k].name + " bucket differs");
}

void check_round_trip(const Run& run) {
  std::ostringstream out;
  write_native(run, out);
  Run back;
  try {
    IngestOptions io;
    io.format = "native";
    back = ingest_text(out.str(), "roundtrip.jsonl", io);
  } catch (const Error& e) {
    throw PropertyViolation(std::string("native output does not read back: ") + e.what());
  }
  require(back.iterations.size() == run.iterations.size(),
          "round trip changed the number of records");
  for (std::size_t i = 0; i < run.iterations.size(); ++i) {
    const Iteration x = run.iterations[i], y = back.iterations[i];
    require(x.step == y.step, "round trip changed a step");
    require(x.count == y.count, "round trip changed a count");
    require(
        same(x.time_s, y.time_s) || std::fabs(x.time_s - y.time_s) <= 1e-9 * std::fabs(x.time_s),
        "round trip changed a time");
  }
  check_copy_analysis(run, back);
}

}  // namespace

void check_ingest(std::string_view data, const std::string& format) {
  IngestOptions io;
  io.format = format;
  io.threads = 1;
  // The pattern reader with a pattern of every kind of group it reads.
  if (format == "pattern")
    io.pattern =
        R"(step (?<step>\d+).*?time (?<time_s>[\d.]+)(?:.*?tok/s (?<tokens_per_s>[\d.]+))?)";
  Run run;
  try {
    run = ingest_text(data, format == "kineto" ? "fuzz.json" : "fuzz.log", io);
  } catch (const Error&) {
    return;
  }
  check_run(run);
  check_analysis(run);
  if (format == "native" || format == "native-csv") check_round_trip(run);
}

void check_quantity(std::string_view data) {
  const Quantity kinds[] = {Quantity::kFlops, Quantity::kFlopRate, Quantity::kDuration,
                            Quantity::kRate,  Quantity::kCount,    Quantity::kRatio,
                            Quantity::kMoney, Quantity::kBandwidth};
  for (Quantity k : kinds) {
    double v = 0;
    try {
      v = parse_quantity(data, k);
    } catch (const Error&) {
      continue;
    }
    require(std::isfinite(v) && v >= 0, "a parsed quantity is negative or not finite");
    if (k == Quantity::kRatio) require(v <= 1.0, "a ratio above 1");
    if (v > 1e-3 && v < 1e30 && (k == Quantity::kFlops || k == Quantity::kFlopRate)) {
      const double back =
          parse_quantity(k == Quantity::kFlops ? format_flops(v) : format_flop_rate(v), k);
      require(std::fabs(back - v) <= 0.01 * v, "formatting and parsing again moved the value");
    }
  }
  try {
    const double k = parse_scale(data.size() > 64 ? data.substr(0, 64) : data);
    require(std::isfinite(k) && k >= 0, "a scale is negative or not finite");
  } catch (const Error&) {
  }
}

void check_number(std::string_view data) {
  double a = 0, b = 0;
  const char* end = data.data() + data.size();
  const char* pa = detail::fast_from_chars(data.data(), end, a);
  const auto [pb, ec] = std::from_chars(data.data(), end, b);
  if (ec != std::errc()) {
    require(pa == nullptr, "fast_from_chars accepted what std::from_chars refuses");
    return;
  }
  require(pa == pb, "fast_from_chars consumed a different number of characters");
  require(std::memcmp(&a, &b, sizeof a) == 0, "fast_from_chars gave different bits");
}

void check_jobs(std::string_view data) {
  JobTrace t;
  try {
    t = parse_jobs(data, "fuzz.csv");
  } catch (const Error&) {
    return;
  }
  if (t.jobs.size() > 2000) t.jobs.resize(2000);  // keep each run short
  double longest = 0;
  for (const auto& j : t.jobs) {
    require(j.duration_s >= 0 && j.gpus >= 1 && std::isfinite(j.submit_s),
            "a bad job passed the reader");
    if (j.gpus <= 16) longest = std::max(longest, j.duration_s);
  }
  for (Placement p : {Placement::kSpread, Placement::kPack}) {
    const ClusterResult r = replay_cluster(t.jobs, 2, 8, p);
    require(r.makespan_s >= longest - 1e-9 * std::max(1.0, longest), "makespan shorter than a job");
    require(r.utilization >= 0 && r.utilization <= 1.0 + 1e-9, "utilisation outside 0..1");
    require(r.fragmentation_idle_gpu_h >= 0 && r.mean_wait_s >= 0 &&
                r.max_wait_s >= r.mean_wait_s - 1e-9,
            "negative idle time or waits");
  }
}

/// Slurm accounting and job summaries: whatever the reader accepts gives a share whose parts
/// add up to the capacity, and a summary line reads back to itself.
void check_fleet(std::string_view data) {
  try {
    SlurmAccounting acct = parse_sacct(data, "fuzz.txt");
    if (acct.jobs.size() > 2000) acct.jobs.resize(2000);
    long long gpus = 1;
    for (const auto& j : acct.jobs) gpus += std::max(0, j.gpus);
    const SchedulerShare s = scheduler_share(acct, static_cast<int>(std::min(gpus, 1LL << 30)));
    const double parts = s.allocated_gpu_h + s.idle_waiting_gpu_h + s.idle_gpu_h;
    require(s.idle_gpu_h >= -1e-9 && s.idle_waiting_gpu_h >= -1e-9 && s.wasted_gpu_h >= 0 &&
                s.wasted_gpu_h <= s.allocated_gpu_h + 1e-9,
            "a negative part of the scheduler's share");
    require(std::fabs(parts - s.capacity_gpu_h) <= 1e-6 * std::max(1.0, s.capacity_gpu_h),
            "the scheduler's share does not add up to the capacity");
  } catch (const Error&) {
  }
  for (std::string_view line : detail::split(data, '\n')) {
    try {
      const std::string once = summary_json(parse_summary(line, "fuzz"));
      require(summary_json(parse_summary(once, "fuzz")) == once, "a summary does not read back");
    } catch (const Error&) {
    }
  }
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = [] {
    std::vector<Target> t;
    for (const char* f :
         {"",           "native",     "native-csv",       "megatron",      "megatron-golden",
          "torchtitan", "hf-trainer", "hf-trainer-state", "deepspeed",     "nanogpt",
          "mlperf",     "maxtext",    "lightning-csv",    "kineto",        "metadata",
          "nemo",       "nanotron",   "torchtune",        "verl",          "llamafactory",
          "fairseq",    "olmo",       "tensorboard",      "wandb-history", "wandb-summary",
          "generic",    "pattern",    "composer",         "wandb-csv"}) {
      std::string name = std::string("ingest_") + (*f ? f : "detect");
      for (char& c : name)
        if (c == '-') c = '_';
      t.push_back({name, f, nullptr});
    }
    t.push_back({"quantity", "", check_quantity});
    t.push_back({"number", "", check_number});
    t.push_back({"jobs", "", check_jobs});
    t.push_back({"fleet", "", check_fleet});
    t.push_back({"rank_streams", "", check_rank_streams});
    return t;
  }();
  return all;
}

void run_target(const std::string& name, std::string_view data) {
  for (const auto& t : targets()) {
    if (t.name != name) continue;
    if (t.check)
      t.check(data);
    else
      check_ingest(data, t.format);
    return;
  }
  throw std::invalid_argument("unknown fuzz target " + name);
}

}  // namespace mfu::fuzz
