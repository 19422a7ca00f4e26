// Megatron-LM, Megatron-DeepSpeed and NeMo text logs: the arguments block, the iteration line
//  [2024-03-30 20:02:40] iteration 10/ 500000 | consumed samples: 1280 | elapsed time per
//  iteration (ms): 9496.4 | throughput per GPU (TFLOP/s/GPU): 137.5 | ... | lm loss: 2.09E-01 |
// and the timers printed after it ("time (ms) | forward-compute: 340.72 | ..." or the newer
// "(min, max) time across ranks (ms):" block). One record per log interval: Megatron averages
// the iterations since the previous line.
#include <fmt/format.h>

#include "ingest/common_meta.hpp"
#include "ingest/megatron_common.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "  num_layers ...................................... 12" -> ("num_layers", "12").
bool split_arg_line(std::string_view line, std::string_view& key, std::string_view& value) {
  const std::size_t dots = line.find(" ..");
  if (dots == std::string_view::npos) return false;
  std::string_view left = trim(line.substr(0, dots));
  const std::size_t sp = left.find_last_of(" \t:");
  key = sp == std::string_view::npos ? left : left.substr(sp + 1);
  std::size_t v = dots + 1;
  while (v < line.size() && line[v] == '.') ++v;
  value = trim(line.substr(v));
  return !key.empty();
}

class MegatronParser : public LineParser {
 public:
  explicit MegatronParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    if (text.empty()) return;
    if (in_args_) {
      if (contains(text, "end of arguments")) {
        in_args_ = false;
        return;
      }
      std::string_view key, value;
      if (split_arg_line(text, key, value)) apply_megatron_arg(key, value, number, out_, true);
      return;
    }
    MegatronIterationLine l;
    if (parse_megatron_iteration(text, l, &layout_)) {
      on_iteration(l, number, text);
      return;
    }
    if (in_minmax_) {
      if (minmax_line(text, number)) return;
      end_timer_block(number);
    }
    const char first = text.front();
    if ((first == '[' || (first >= '0' && first <= '9')) && text.size() > 20)
      out_.timestamp(out_.line_timestamp(text));
    if (const std::size_t p = find_text(text, "time (ms) |"); p != std::string_view::npos) {
      single_line_timers(text.substr(p + 11), number);
      return;
    }
    if (contains(text, "(min, max) time across ranks (ms):")) {
      in_minmax_ = true;
      timers_.clear();
      timer_line_ = number;
      return;
    }
    if (contains(text, "------------------------ arguments ------------------------") ||
        (contains(text, "arguments") && contains(text, "------") && !contains(text, "end of"))) {
      in_args_ = true;
      return;
    }
    other_line(text, number);
  }

  void finish() override {
    if (in_minmax_) end_timer_block(0);
    scanner_.finish(out_);
  }

 private:
  void on_iteration(const MegatronIterationLine& l, std::uint64_t number, std::string_view text) {
    if (in_minmax_) end_timer_block(number);
    if (l.bad_number || !known(l.time_s) || l.time_s <= 0 || !std::isfinite(l.time_s)) {
      out_.malformed(number,
                     fmt::format("iteration {}: cannot read 'elapsed time per iteration' (expected "
                                 "milliseconds > 0); record skipped",
                                 l.iteration));
      return;
    }
    Iteration it = maker_.make(l, number);
    it.rank = out_.line_rank(text);
    out_.saw_rank(it.rank);
    if (l.train_iters > 0)
      meta_once(held_.train_iters, "train_iters", static_cast<double>(l.train_iters), number);
    if (known(l.global_batch))
      meta_once(held_.global_batch, "global_batch", l.global_batch, number);
    if (known(l.actual_seq_len)) meta_once(held_.seq_len, "seq_len", l.actual_seq_len, number);
    if (l.reporter)
      meta_once(held_.reporter, "framework_flops_by", std::string(l.reporter), number);
    out_.add(it);
    timers_pending_for_ = out_.run.iterations.size();
  }

  /// Metadata every iteration line repeats: set unless the run has the key already, as
  /// RunBuilder::meta does, and not looked up again once it has (a key is never erased while a
  /// file is parsed): three map lookups a line were ~2% of the parse.
  template <class V>
  void meta_once(bool& held, std::string_view key, const V& value, std::uint64_t number) {
    if (held) return;
    out_.meta(key, value, number, false);
    held = out_.run.meta.has(key);
  }

  /// "forward-compute: 340.72 | backward-compute: 176.25 | ..." (milliseconds).
  void single_line_timers(std::string_view rest, std::uint64_t number) {
    TimerSet timers;
    for (auto seg : split(rest, '|')) {
      const std::size_t colon = seg.rfind(':');
      if (colon == std::string_view::npos) continue;
      std::string_view v = seg.substr(colon + 1);
      auto d = take_number(v);
      if (!d) continue;
      timers.add(trim(seg.substr(0, colon)), *d / 1000.0);
    }
    attach_timers(timers, number);
  }

  /// "    forward-backward ...............................: (3419.12, 3419.45)" (max is used:
  /// the step waits for the slowest rank).
  bool minmax_line(std::string_view text, std::uint64_t) {
    std::string_view t = trim(text);
    // Host prefixes ("10.0.0.1: ") come before the timer name.
    const std::size_t open = t.rfind(": (");
    if (open == std::string_view::npos || t.back() != ')') return false;
    std::string_view name = trim(t.substr(0, open));
    while (!name.empty() && name.back() == '.') name.remove_suffix(1);
    name = trim(name);
    const std::size_t sp = name.find_last_of(' ');
    if (sp != std::string_view::npos) name = name.substr(sp + 1);
    std::string_view nums = t.substr(open + 3, t.size() - open - 4);
    const std::size_t comma = nums.find(',');
    std::string_view maxs = comma == std::string_view::npos ? nums : nums.substr(comma + 1);
    auto d = take_number(maxs);
    if (!d) return false;
    timers_.add(name, *d / 1000.0);
    return true;
  }

  void end_timer_block(std::uint64_t) {
    in_minmax_ = false;
    attach_timers(timers_, timer_line_);
    timers_.clear();
  }

  void attach_timers(const TimerSet& timers, std::uint64_t number) {
    if (timers.empty()) return;
    const auto& raw = timers.raw();
    // Checkpoint and setup timers are events, not iteration phases.
    auto event_from = [&](const char* name, EventKind kind) {
      auto it = raw.find(name);
      if (it == raw.end()) return;
      Event e;
      e.kind = kind;
      e.duration_s = it->second;
      e.line = static_cast<std::uint32_t>(number);
      e.detail = name;
      e.step = out_.has_last() ? out_.last().step : 0;
      if (kind == EventKind::kCheckpointSave && pending_save_ >= 0) {
        out_.run.events[static_cast<std::size_t>(pending_save_)].duration_s = it->second;
        pending_save_ = -1;
        return;
      }
      out_.add_event(std::move(e));
    };
    event_from("save-checkpoint", EventKind::kCheckpointSave);
    event_from("load-checkpoint", EventKind::kCheckpointLoad);
    event_from("model-and-optimizer-setup", EventKind::kStartup);
    event_from("train/valid/test-data-iterators-setup", EventKind::kStartup);
    event_from("evaluate", EventKind::kEval);
    if (timers_pending_for_ == 0 || timers_pending_for_ != out_.run.iterations.size()) return;
    Iteration it = out_.last();
    timers.apply(it);
    out_.replace_last(it);
    timers_pending_for_ = 0;  // one timer set per iteration line
  }

  void other_line(std::string_view text, std::uint64_t number) {
    if (contains(text, "using world size:")) {
      // "using world size: 8, data-parallel size: 8, context-parallel size: 1,
      // tensor-model-parallel
      //  size: 1, pipeline-model-parallel size: 1"
      if (auto v = number_after(text, "using world size:")) out_.meta("gpus", *v, number, true);
      if (auto v = number_after(text, "data-parallel size:"))
        out_.meta("dp", *v, number, true);
      else if (auto v2 = number_after(text, "data-parallel-size:"))
        out_.meta("dp", *v2, number, true);
      if (auto v = number_after(text, "context-parallel size:")) out_.meta("cp", *v, number, true);
      if (auto v = number_after(text, "tensor-model-parallel size:"))
        out_.meta("tp", *v, number, true);
      if (auto v = number_after(text, "pipeline-model-parallel size:"))
        out_.meta("pp", *v, number, true);
      return;
    }
    if (contains(text, "padded vocab")) {
      if (auto v = number_after(text, "(new size:")) out_.meta("vocab", *v, number, true);
      return;
    }
    if (contains(text, "saving checkpoint at iteration")) {
      Event e;
      e.kind = EventKind::kCheckpointSave;
      e.line = static_cast<std::uint32_t>(number);
      if (auto v = number_after(text, "saving checkpoint at iteration")) e.step = as_step(*v);
      e.timestamp_s = out_.line_timestamp(text);
      save_start_ts_ = e.timestamp_s;
      e.detail = "checkpoint save";
      out_.add_event(std::move(e));
      pending_save_ = static_cast<std::int64_t>(out_.run.events.size()) - 1;
      return;
    }
    if (contains(text, "successfully saved checkpoint")) {
      const double ts = out_.line_timestamp(text);
      if (pending_save_ >= 0 && known(ts) && known(save_start_ts_) && ts >= save_start_ts_) {
        out_.run.events[static_cast<std::size_t>(pending_save_)].duration_s = ts - save_start_ts_;
        pending_save_ = -1;
      }
      return;
    }
    if (contains(text, "validation loss at iteration") ||
        contains(text, "validation loss at the end")) {
      Event e;
      e.kind = EventKind::kEval;
      e.line = static_cast<std::uint32_t>(number);
      if (auto v = number_after(text, "at iteration")) e.step = as_step(*v);
      e.timestamp_s = out_.line_timestamp(text);
      e.detail = "validation";
      out_.add_event(std::move(e));
      return;
    }
    if (contains(text, "successfully loaded checkpoint") ||
        contains(text, "loading checkpoint from")) {
      if (contains(text, "successfully")) {
        Event e;
        e.kind = EventKind::kCheckpointLoad;
        e.line = static_cast<std::uint32_t>(number);
        if (auto v = number_after(text, "at iteration")) e.step = as_step(*v);
        e.timestamp_s = out_.line_timestamp(text);
        e.detail = "checkpoint load";
        out_.add_event(std::move(e));
      }
      return;
    }
    if ((contains(text, "pretrain_") || contains(text, "--num-layers") ||
         contains(text, "--hidden-size")) &&
        contains(text, "--")) {
      apply_megatron_command_line(text, number, out_);
      return;
    }
    // Shell trace of a launcher script: "+ TP=4", "+ GPUS_PER_NODE=16".
    if (starts_with(text, "+ ")) {
      std::string_view t = text.substr(2);
      const std::size_t eq = t.find('=');
      if (eq != std::string_view::npos && eq < 40) {
        const std::string_view k = t.substr(0, eq);
        auto v = parse_double(t.substr(eq + 1));
        if (v) {
          if (k == "GPUS_PER_NODE")
            out_.meta("gpus_per_node", *v, number, false);
          else if (k == "NNODES")
            out_.meta("nodes", *v, number, false);
          else if (k == "WORLD_SIZE")
            out_.meta("gpus", *v, number, false);
        }
      }
      return;
    }
    scanner_.scan(text, number, out_);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  MegatronRecordMaker maker_;
  MegatronLineMemo layout_;  // the previous iteration line's fields
  TimerSet timers_;
  struct {
    bool train_iters = false, global_batch = false, seq_len = false, reporter = false;
  } held_;  // metadata keys the run has (meta_once)
  bool in_args_ = false;
  bool in_minmax_ = false;
  std::uint64_t timer_line_ = 0;
  std::size_t timers_pending_for_ = 0;
  std::int64_t pending_save_ = -1;
  double save_start_ts_ = kUnknown;
};

double sniff_megatron(std::string_view head, std::string_view) {
  double score = 0;
  std::size_t pos = 0;
  int iter_lines = 0;
  while ((pos = find_text(head, "elapsed time per iteration", pos)) != std::string_view::npos) {
    // GPT-NeoX's line starts with "samples/sec:" and says "approx flops per GPU": DeepSpeed.
    const std::size_t ls = head.rfind('\n', pos);
    std::string_view l = head.substr(ls == std::string_view::npos ? 0 : ls + 1, 200);
    if (!contains(l, "samples/sec:") && contains(l, "iteration")) ++iter_lines;
    pos += 10;
  }
  score += iter_lines * 2.0;
  if (contains(head, "------------------------ arguments ------------------------")) score += 5;
  if (contains(head, "(min, max) time across ranks (ms)")) score += 2;
  if (contains(head, "time (ms) | forward-compute") ||
      contains(head, "time (ms) | forward-backward"))
    score += 2;
  if (score == 0 && (contains(head, "pretrain_gpt") || contains(head, "megatron"))) score = 0.5;
  return score;
}

/// An iteration line closes the timer block before it, and the parser's state (the previous
/// iteration and consumed samples) is rebuilt by replaying the iteration line before a cut.
bool record_start(std::string_view line) {
  MegatronIterationLine l;
  return parse_megatron_iteration(line, l);
}

}  // namespace

const FormatSpec& megatron_format() {
  static const FormatSpec spec{
      "megatron",
      "Megatron-LM / Megatron-DeepSpeed / NeMo text logs (iteration lines, arguments, timers)",
      sniff_megatron,
      make_line_parser<MegatronParser>,
      nullptr,
      nullptr,
      0,
      TimingKind::kAveraged,
      record_start};
  return spec;
}

}  // namespace mfu::detail
