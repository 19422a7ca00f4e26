// Throughput of each stage: ingest (parsing, MB/s) of each format on a synthetic file
// (generated once into the temp directory), finalize (the shared post-processing) and analyze
// (records/s) alone on a run ingested once, format detection on a file's first MiB, a line
// parser with the record store but without page faults (native, Megatron) and the Megatron
// iteration line alone, the record store's writes, the real samples where ../shared/samples
// exists, and the quantity parser.
// Run: build/tests/bench/mfu_bench [--benchmark_filter=native]
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analysis/parallel.hpp"
#include "analysis/resolve.hpp"
#include "analysis/select.hpp"
#include "analysis/stages.hpp"
#include "generate_logs.hpp"
#include "ingest/megatron_common.hpp"
#include "ingest/parser.hpp"
#include "io/line_prefix.hpp"
#include "mfu/analysis.hpp"
#include "mfu/ingest.hpp"
#include "mfu/model.hpp"
#include "mfu/units.hpp"

namespace {

namespace fs = std::filesystem;

/// A synthetic log of `mb` MB, generated on first use and shared by the benchmarks.
const std::string& synthetic(const std::string& kind, int mb) {
  static std::map<std::string, std::string> paths;
  const std::string key = kind + std::to_string(mb);
  auto it = paths.find(key);
  if (it != paths.end()) return it->second;
  const fs::path p =
      fs::temp_directory_path() / ("mfu-bench-" + key + (kind == "kineto" ? ".json" : ".log"));
  if (!fs::exists(p)) mfu_bench::generate(kind, static_cast<std::uint64_t>(mb) << 20, p.string());
  return paths[key] = p.string();
}

void ingest_file(benchmark::State& state, const std::string& path, bool analyze_too) {
  const auto bytes = static_cast<std::int64_t>(fs::file_size(path));
  for (auto _ : state) {
    mfu::Run run = mfu::ingest({path});
    if (analyze_too) {
      mfu::AnalyzeOptions o;
      if (!run.meta.has("gpu_name")) o.gpu = "h100";
      if (!run.meta.has("gpus")) o.gpus = 64;
      benchmark::DoNotOptimize(mfu::analyze(run, o));
    }
    benchmark::DoNotOptimize(run);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

/// A directory of `files` small per-rank logs of one job (20 steps each, clocks overlapping),
/// generated on first use: the per-rank merge is timed on it (issue: 8,000 rank files took
/// 97 s when the merge compared every pair of files).
const std::string& rank_files(int files) {
  static std::map<int, std::string> dirs;
  auto it = dirs.find(files);
  if (it != dirs.end()) return it->second;
  const fs::path dir = fs::temp_directory_path() / ("mfu-bench-ranks-" + std::to_string(files));
  if (!fs::exists(dir / ".done")) {
    fs::create_directories(dir);
    for (int r = 0; r < files; ++r) {
      std::ofstream out(dir / ("rank" + std::to_string(r) + ".jsonl"));
      out << std::fixed;
      out << "{\"type\":\"meta\",\"gpu\":\"h100-sxm\",\"gpus\":" << files
          << ",\"dtype\":\"bf16\"}\n";
      for (int step = 1; step <= 20; ++step)
        out << "{\"step\":" << step << ",\"time_s\":" << 1.0 + 1e-6 * r
            << ",\"timestamp\":" << 1714521600 + step + 0.01 * (r % 5) << "}\n";
    }
    std::ofstream(dir / ".done") << "";
  }
  return dirs[files] = dir.string();
}

void BM_IngestRankFiles(benchmark::State& s) {
  const std::string& dir = rank_files(static_cast<int>(s.range(0)));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
  for (auto _ : s) benchmark::DoNotOptimize(mfu::ingest(files));
  s.SetItemsProcessed(static_cast<std::int64_t>(s.iterations()) * s.range(0));
}
BENCHMARK(BM_IngestRankFiles)->Arg(1000)->Arg(8000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_IngestNative(benchmark::State& s) {
  ingest_file(s, synthetic("native", 64), false);
}
void BM_IngestMegatron(benchmark::State& s) {
  ingest_file(s, synthetic("megatron", 64), false);
}
/// The synthetic log of `kind` with a restart at its end: its first 1,000 lines again (the
/// job resumed from an early checkpoint). One restart took the whole table out of the fast
/// path of combining streams: 4.8x the time and 12x the memory of the log without it.
const std::string& restarted(const std::string& kind) {
  static std::map<std::string, std::string> paths;
  auto it = paths.find(kind);
  if (it != paths.end()) return it->second;
  const std::string& base = synthetic(kind, 64);
  const fs::path p = fs::temp_directory_path() / ("mfu-bench-restarted-" + kind + ".log");
  if (!fs::exists(p)) {
    std::ifstream in(base, std::ios::binary);
    std::ofstream out(p, std::ios::binary);
    out << in.rdbuf();
    std::ifstream again(base, std::ios::binary);
    std::string line;
    for (int k = 0; k < 1000 && std::getline(again, line); ++k)
      if (k > 0) out << line << '\n';  // the first line is the log's header
  }
  return paths[kind] = p.string();
}
void BM_IngestNativeRestarted(benchmark::State& s) {
  ingest_file(s, restarted("native"), false);
}
/// The synthetic native log of 32 MiB with each record printed by two ranks, one line after
/// the other (a "rank" field on each): the records of several ranks in one file are combined
/// per step (copied out record by record before 0ca6213: 3x the time of one rank's lines).
const std::string& two_ranks() {
  static std::string path;
  if (!path.empty()) return path;
  const std::string& base = synthetic("native", 32);
  const fs::path p = fs::temp_directory_path() / "mfu-bench-two-ranks.jsonl";
  if (!fs::exists(p)) {
    std::ifstream in(base, std::ios::binary);
    std::ofstream out(p, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("{\"step\"", 0) != 0) {
        out << line << '\n';
        continue;
      }
      for (int r = 0; r < 2; ++r) out << "{\"rank\":" << r << ',' << line.substr(1) << '\n';
    }
  }
  return path = p.string();
}
void BM_IngestNativeTwoRanks(benchmark::State& s) {
  ingest_file(s, two_ranks(), false);
}
void BM_IngestKineto(benchmark::State& s) {
  ingest_file(s, synthetic("kineto", 64), false);
}
void BM_AnalyzeNative(benchmark::State& s) {
  ingest_file(s, synthetic("native", 64), true);
}
void BM_AnalyzeMegatron(benchmark::State& s) {
  ingest_file(s, synthetic("megatron", 64), true);
}
BENCHMARK(BM_IngestNative)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IngestMegatron)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IngestNativeRestarted)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IngestNativeTwoRanks)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IngestKineto)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeNative)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeMegatron)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The first MiB of a file (what ingest reads to choose a parser).
std::string first_mib(const std::string& path) {
  std::string head(std::size_t{1} << 20, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

/// Format detection on the first MiB of a file (what ingest reads to choose a parser), before
/// any parsing starts: on one core, whatever the file's size.
void detect_head(benchmark::State& state, const std::string& path) {
  const std::string head = first_mib(path);
  for (auto _ : state)
    benchmark::DoNotOptimize(mfu::detect_format(head, fs::path(path).filename().string()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(head.size()));
}
void BM_DetectNative(benchmark::State& s) {
  detect_head(s, synthetic("native", 64));
}
void BM_DetectMegatron(benchmark::State& s) {
  detect_head(s, synthetic("megatron", 64));
}
BENCHMARK(BM_DetectNative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DetectMegatron)->Unit(benchmark::kMillisecond);

/// The lines of a MiB of a synthetic log, as a parser is handed them.
std::vector<std::string_view> lines_of(const std::string& text) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

/// A format's line parser and the record store, without reading, peeling or finalizing: the
/// lines of the synthetic log's first MiB into a fresh run each time (its store is small enough
/// to be reused memory, so page faults are not counted here, unlike in the ingest benchmarks).
void parse_lines(benchmark::State& state, const char* format, const char* kind,
                 const mfu::IngestOptions& options = {}) {
  const std::string head = first_mib(synthetic(kind, 64));
  const std::vector<std::string_view> lines = lines_of(head);
  const mfu::detail::FormatSpec* spec = mfu::detail::find_format(format);
  for (auto _ : state) {
    mfu::Run run;
    mfu::detail::RunBuilder out(run, options, "bench", 0);
    const auto parser = spec->make_line_parser(out);
    std::uint64_t number = 0;
    for (const std::string_view l : lines) parser->line(l, ++number);
    parser->finish();
    benchmark::DoNotOptimize(run);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(lines.size()));
}
void BM_NativeLines(benchmark::State& s) {
  parse_lines(s, "native", "native");
}
/// As `mfu analyze` and `mfu check` read: without the loss, which no report of theirs shows.
void BM_NativeLinesWithoutLoss(benchmark::State& s) {
  mfu::IngestOptions options;
  options.keep_loss = false;
  parse_lines(s, "native", "native", options);
}
void BM_MegatronLines(benchmark::State& s) {
  parse_lines(s, "megatron", "megatron");
}
BENCHMARK(BM_NativeLines);
BENCHMARK(BM_NativeLinesWithoutLoss);
BENCHMARK(BM_MegatronLines);

/// The Megatron iteration line alone (detail::parse_megatron_iteration, with the field layout
/// remembered from line to line as the parser does), on the lines of the synthetic log's first
/// MiB as the parser sees them (prefix peeled).
void BM_MegatronIterationLine(benchmark::State& state) {
  const std::string peeled = mfu::detail::peel_text(first_mib(synthetic("megatron", 64)));
  const std::vector<std::string_view> lines = lines_of(peeled);
  for (auto _ : state) {
    mfu::detail::MegatronLineMemo layout;  // as the parser keeps it from line to line
    for (const std::string_view l : lines) {
      mfu::detail::MegatronIterationLine out;
      benchmark::DoNotOptimize(mfu::detail::parse_megatron_iteration(l, out, &layout));
      benchmark::DoNotOptimize(out);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(lines.size()));
}
BENCHMARK(BM_MegatronIterationLine);

/// The post-processing every format shares (detail::finalize_run: per-rank streams, restarts,
/// what each record covers), alone: on a copy of a run ingested once, copied outside the timing.
/// (Run again over a finished run, it finds the same streams; the pass over the records is the
/// same work.)
void finalize_only(benchmark::State& state, const std::string& path) {
  const mfu::Run run = mfu::ingest({path});
  const mfu::TimingKind timing = run.timing;
  for (auto _ : state) {
    state.PauseTiming();
    mfu::Run copy = run;
    state.ResumeTiming();
    mfu::detail::finalize_run(copy, timing);
    benchmark::DoNotOptimize(copy);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(run.iterations.size()));
}
void BM_FinalizeOnlyNative(benchmark::State& s) {
  finalize_only(s, synthetic("native", 64));
}
void BM_FinalizeOnlyMegatron(benchmark::State& s) {
  finalize_only(s, synthetic("megatron", 64));
}
BENCHMARK(BM_FinalizeOnlyNative)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FinalizeOnlyMegatron)->Unit(benchmark::kMillisecond);

/// The analysis alone, on a run ingested once (records per second).
void analyze_only(benchmark::State& state, const std::string& path) {
  const mfu::Run run = mfu::ingest({path});
  mfu::AnalyzeOptions o;
  o.gpu = "h100";
  o.gpus = 64;
  o.model = mfu::resolve_model("llama3-8b");
  for (auto _ : state) benchmark::DoNotOptimize(mfu::analyze(run, o));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(run.iterations.size()));
}
void BM_AnalyzeOnlyNative(benchmark::State& s) {
  analyze_only(s, synthetic("native", 64));
}
void BM_AnalyzeOnlyMegatron(benchmark::State& s) {
  analyze_only(s, synthetic("megatron", 64));
}
// Real time: the analysis' passes run on every core, and the records per second it reports
// should be per second of wall time, not of the calling thread's CPU.
BENCHMARK(BM_AnalyzeOnlyNative)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeOnlyMegatron)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The analysis' stages one at a time (src/analysis/stages.hpp), each on what the stages before
/// it made, computed once outside the timing: where BM_AnalyzeOnly* spends its time. A stage
/// that marks the records' flags works on a fresh copy each time (copied outside the timing).
enum class Stage { kReadRecords, kSteady, kClock, kAttribute };

void analysis_stage(benchmark::State& state, const std::string& kind, Stage stage) {
  using namespace mfu::detail;
  const mfu::Run run = mfu::ingest({synthetic(kind, 64)});
  mfu::AnalyzeOptions o;
  o.gpu = "h100";
  o.gpus = 64;
  o.model = mfu::resolve_model("llama3-8b");
  const Resolved r = resolve_inputs(run, o, mfu::GpuDatabase::builtin());
  mfu::Analysis a = resolved_analysis(run, r);
  const unsigned threads = pass_threads(o.threads);
  const Records read = read_records(run, threads);
  const WorkPlan work = plan_work(run, r, read, a);
  Records steady = read;
  const Steady st = find_steady(run, r, work, o, steady, a);
  const Clock clock = plan_clock(run, steady);
  const EventPlan ev = plan_events(run, steady, st, clock);
  for (auto _ : state) {
    switch (stage) {
      case Stage::kReadRecords: benchmark::DoNotOptimize(read_records(run, threads)); break;
      case Stage::kClock: benchmark::DoNotOptimize(plan_clock(run, steady)); break;
      case Stage::kSteady:
      case Stage::kAttribute: {
        state.PauseTiming();
        Records rec = stage == Stage::kSteady ? read : steady;
        state.ResumeTiming();
        if (stage == Stage::kSteady)
          benchmark::DoNotOptimize(find_steady(run, r, work, o, rec, a));
        else
          benchmark::DoNotOptimize(attribute(run, r, work, rec, st, clock, ev));
        break;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(run.iterations.size()));
}
// Every stage of both formats, in real time as BM_AnalyzeOnly*: the stages run on every core.
const bool kStagesRegistered = [] {
  for (const char* kind : {"native", "megatron"})
    for (const auto& [name, stage] : {std::pair{"read_records", Stage::kReadRecords},
                                      {"steady", Stage::kSteady},
                                      {"clock", Stage::kClock},
                                      {"attribute", Stage::kAttribute}}) {
      // The native file's lines carry no timestamps: its clock stage returns at once.
      if (stage == Stage::kClock && std::string(kind) == "native") continue;
      benchmark::RegisterBenchmark(
          ("BM_Stage/" + std::string(name) + "_" + kind).c_str(),
          [kind, stage = stage](benchmark::State& st) { analysis_stage(st, kind, stage); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  return true;
}();

/// Every real sample of one framework folder, parsed as a whole (small files: per-call overhead
/// matters as much as bytes).
void BM_Samples(benchmark::State& state, const std::string& folder) {
  const fs::path dir = fs::path(MFU_SOURCE_DIR) / ".." / "shared" / "samples" / folder;
  if (!fs::is_directory(dir)) {
    state.SkipWithError("../shared/samples not found");
    return;
  }
  std::vector<std::string> files;
  std::int64_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "PROVENANCE.md") continue;
    files.push_back(e.path().string());
    bytes += static_cast<std::int64_t>(e.file_size());
  }
  for (auto _ : state) {
    for (const auto& f : files) {
      try {
        benchmark::DoNotOptimize(mfu::ingest({f}));
      } catch (const std::exception&) {
        // Companion files (configs) are not logs on their own.
      }
    }
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK_CAPTURE(BM_Samples, megatron, std::string("megatron"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Samples, torchtitan, std::string("torchtitan"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Samples, hf_trainer, std::string("hf_trainer"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Samples, deepspeed, std::string("deepspeed"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Samples, nanogpt_llmc, std::string("nanogpt_llmc"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Samples, mlperf, std::string("mlperf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Samples, kineto_trace, std::string("kineto_trace"))
    ->Unit(benchmark::kMillisecond);

/// Writing records into the store alone, shaped like the native file's lines (step and line
/// counting up, constant tokens, a time and four timers printed with six decimals, a loss):
/// the column writes are a fifth of the native ingest's profile.
void BM_StoreWrite(benchmark::State& state) {
  constexpr std::size_t kRecords = 1 << 20;
  std::vector<mfu::Iteration> records(1024);
  for (std::size_t i = 0; i < records.size(); ++i) {
    auto& it = records[i];
    // Each value as a parser reads it from its printed decimals, a different one each time.
    const auto decimal = [i](int whole, int scale) {
      const std::string text = std::to_string(whole) + "." + std::to_string(100000 + i * 37);
      return std::stod(text.substr(0, text.find('.') + 1 + static_cast<std::size_t>(scale)));
    };
    it.time_s = decimal(1, 6);
    it.tokens = 524288;
    it.loss = decimal(9, 5);
    for (std::size_t p = 0; p < 4; ++p) it.phase[p] = decimal(0, 6);
  }
  for (auto _ : state) {
    mfu::IterationTable table;
    for (std::size_t i = 0; i < kRecords; ++i) {
      mfu::Iteration it = records[i % records.size()];
      it.step = static_cast<std::int64_t>(i) + 1;
      it.line = static_cast<std::uint32_t>(i) + 2;
      table.push_back(it);
    }
    benchmark::DoNotOptimize(table);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kRecords));
}
BENCHMARK(BM_StoreWrite)->Unit(benchmark::kMillisecond);

void BM_ParseQuantity(benchmark::State& state) {
  const char* inputs[] = {"989.5 TFLOP/s", "330ms", "1.2M", "40%", "540.35B", "2.5h"};
  const mfu::Quantity kinds[] = {mfu::Quantity::kFlopRate, mfu::Quantity::kDuration,
                                 mfu::Quantity::kRate,     mfu::Quantity::kRatio,
                                 mfu::Quantity::kCount,    mfu::Quantity::kDuration};
  for (auto _ : state)
    for (int i = 0; i < 6; ++i) benchmark::DoNotOptimize(mfu::parse_quantity(inputs[i], kinds[i]));
  state.SetItemsProcessed(state.iterations() * 6);
}
BENCHMARK(BM_ParseQuantity);

}  // namespace

BENCHMARK_MAIN();

namespace {

/// Step times like a long run's: 1 s +- 3% around a slow drift, one stall of 40 s every 5,000
/// steps; as many as the 1 GiB native file has records.
const std::vector<double>& step_times() {
  static const std::vector<double> times = [] {
    std::vector<double> t(5'627'502);
    std::uint64_t x = 88172645463325252ULL;
    for (std::size_t i = 0; i < t.size(); ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      const double noise = static_cast<double>(x % 60001) / 1e6 - 0.03;
      t[i] = i % 5000 == 4999 ? 40.0 : 1.0 + noise + 1e-9 * static_cast<double>(i);
    }
    return t;
  }();
  return times;
}

}  // namespace

/// The step-time distribution of stage 3 (mean, median, p05, p95, MAD) by the exact selection
/// over a column (analysis/select.hpp), two threads: the analysis computes three or four such
/// distributions of every record.
void BM_DistributionOfColumn(benchmark::State& state) {
  const std::vector<double>& t = step_times();
  for (auto _ : state) {
    auto read = [&t](std::size_t lo, std::size_t hi, auto&& f) {
      for (std::size_t i = lo; i < hi; ++i) f(t[i]);
    };
    benchmark::DoNotOptimize(
        mfu::detail::distribution_of(mfu::detail::make_source(read, t.size(), 2), 1.0, true));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(t.size()));
}
BENCHMARK(BM_DistributionOfColumn)->Unit(benchmark::kMillisecond)->UseRealTime();
