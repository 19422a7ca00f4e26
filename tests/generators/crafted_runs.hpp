#pragma once
// Crafted runs, one per class of input that once got a confident wrong number (issue 12):
// each generator writes a log (mfu's native JSON Lines or Megatron-LM text) whose right answer
// is computed by hand in the comment above it, and returns it with that answer.
//
// All of them run on 8 x A100 SXM4 80GB: dense BF16 peak 312 TFLOP/s per GPU (NVIDIA A100
// datasheet), so P x G = 2.496e15 FLOP/s, and 1.248e15 model FLOPs per iteration take 0.5 s
// at peak (50% MFU in a 1 s step); 4.992e14 take 0.2 s (20%).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>

namespace mfu::crafted {

inline constexpr double kPeakTimesGpus = 312e12 * 8;

/// The right answer: wall time and the buckets that are not zero, in seconds.
struct Expected {
  std::string name;
  std::string text;
  std::string file;  ///< name to ingest it under (its extension picks nothing: content does)
  double wall_s = 0;
  std::map<std::string, double> buckets;  ///< every bucket not listed is 0
  double mfu = NAN;
  double mfu_steady = NAN;
  /// Megatron text names neither the GPU nor their count without its arguments header: the
  /// flags `mfu analyze` needs then.
  bool needs_hardware_flags = false;
  [[nodiscard]] std::string flags() const {
    return needs_hardware_flags ? " --gpu a100-sxm4-80gb --gpus 8" : "";
  }
};

inline std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

inline std::string native_meta() {
  return R"({"type":"meta","gpu":"a100-sxm4-80gb","gpus":8})"
         "\n";
}

/// One native record; `phases` is the inside of the phases object ("" for none).
inline std::string native_step(int step, double time_s, double flops, const std::string& phases,
                               const std::string& extra = "") {
  std::string s = R"({"step":)" + std::to_string(step) + R"(,"time_s":)" + num(time_s) +
                  R"(,"model_flops":)" + num(flops) + extra;
  if (!phases.empty()) s += R"(,"phases":{)" + phases + "}";
  return s + "}\n";
}

/// Class 1: a stall explained by a timer. 100 steps of 1 s; every 20th takes 3 s and its timer
/// (data_s, comm_s, optimizer_s or idle_s) says 2.0 s of it. Wall = 95 x 1 + 5 x 3 = 110 s.
/// At 50% (1.248e15 FLOPs/step): compute 100 x 0.5 = 50 s; the timer's bucket 5 x 2 = 10 s;
/// the rest is unattributed: 95 x 0.5 + 5 x (3 - 2 - 0.5) = 50 s. MFU = 50 / 110 = 45.45%.
/// At 20% (4.992e14): compute 20 s, the timer 10 s, unattributed 95 x 0.8 + 5 x 0.8 = 80 s.
/// The optimizer step has no model FLOPs: it is compute below peak.
inline Expected stall_with_timer(const std::string& timer, double flops) {
  static const std::map<std::string, std::string> bucket{{"data_s", "io"},
                                                         {"comm_s", "comm"},
                                                         {"optimizer_s", "compute_inefficiency"},
                                                         {"idle_s", "idle"}};
  Expected e;
  e.name = "stall explained by " + timer + " at " + num(flops / kPeakTimesGpus) + " s ideal";
  e.file = "stall.jsonl";
  e.text = native_meta();
  for (int i = 1; i <= 100; ++i) {
    const bool slow = i % 20 == 0;
    e.text += native_step(i, slow ? 3.0 : 1.0, flops,
                          "\"" + timer + "\":" + (slow ? std::string("2.0") : std::string("0.0")));
  }
  const double ideal = flops / kPeakTimesGpus;
  e.wall_s = 110;
  e.buckets = {{"compute", 100 * ideal}, {bucket.at(timer), 10.0}, {"other", 100 * (1 - ideal)}};
  e.mfu = e.mfu_steady = 100 * ideal / 110;
  return e;
}

/// Megatron-LM text with a log interval of 10: one line per 10 iterations (their average),
/// with the framework's own TFLOP/s per GPU and a timers line.
inline std::string megatron_line(std::time_t ts, int iteration, int total, double ms, double tflops,
                                 bool cut_before_tflops = false) {
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::gmtime(&ts));
  char b[512];
  std::snprintf(b, sizeof b,
                " [%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                "(ms): %.1f | ",
                when, iteration, total, iteration * 128, ms);
  std::string s = b;
  if (cut_before_tflops) return s + "\n";
  std::snprintf(b, sizeof b,
                "throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 2.000E-06 | global "
                "batch size:   128 | lm loss: 2.092005E-01 | loss scale: 1.0 | number of skipped "
                "iterations:   0 | number of nan iterations:   0 |\n",
                tflops);
  return s + b;
}

/// Class 1 in Megatron text: 20 lines of 10 iterations; every 5th line averages 3 s per
/// iteration, 2 s of it in batch-generator (Megatron times get_batch inside forward-compute,
/// so forward-compute is 2300 ms there and 300.5 ms elsewhere, with 0.5 ms of batch-generator).
/// The log prints 156 TFLOP/s per GPU at 1 s (52 at 3 s): 1.248e15 FLOPs per iteration, 0.5 s
/// at peak. Per normal line (10 s): compute 5; optimizer 0.5 and forward+backward above the
/// ideal 10 x (0.300 + 0.400) - 5 = 2.0 s: compute below peak 2.5; data 0.005; unattributed
/// 10 - 5 - 2.5 - 0.005 = 2.495. Per slow line (30 s): compute 5; below peak 0.5 + 2.0; data
/// 20; unattributed 2.5, of which the stall's excess not explained by the data timer's growth
/// (20 - (20 - 0.005) = 0.005 s) moves to idle. Wall: 16 x 10 + 4 x 30 = 280 s.
/// compute 100, below peak 16 x 2.5 + 4 x 2.5 = 50, io 16 x 0.005 + 4 x 20 = 80.08,
/// other 16 x 2.495 + 4 x 2.495 = 49.9, idle 4 x 0.005 = 0.02. MFU 100 / 280.
inline Expected megatron_stall_with_batch_generator() {
  Expected e;
  e.name = "Megatron batch-generator stall";
  e.needs_hardware_flags = true;
  e.file = "megatron_stall.log";
  std::time_t ts = 1711828800;  // 2024-03-30 20:00:00 UTC
  for (int it = 10; it <= 200; it += 10) {
    const bool slow = it % 50 == 0;
    const double ms = slow ? 3000.0 : 1000.0;
    ts += static_cast<std::time_t>(10 * ms / 1000);
    e.text += megatron_line(ts, it, 200, ms, 156.0 * 1000 / ms);
    e.text += std::string("time (ms) | forward-compute: ") + (slow ? "2300.00" : "300.50") +
              " | backward-compute: 400.00 | optimizer: 50.00 | batch-generator: " +
              (slow ? "2000.00" : "0.50") + "\n";
  }
  e.wall_s = 280;
  e.buckets = {{"compute", 100},
               {"compute_inefficiency", 50},
               {"io", 80.08},
               {"other", 49.9},
               {"idle", 0.02}};
  e.mfu = e.mfu_steady = 100.0 / 280;
  return e;
}

/// Class 2: one second counted once. 1000 steps of 1 s at 50%; step 500 takes 43 s because
/// a 42 s checkpoint save ran inside it, and the log says so with an event at step 500 (no
/// timestamps). Wall = 999 + 43 = 1042 s (not 1084): checkpoint 42 (measured), compute 500,
/// unattributed 999 x 0.5 + (43 - 42 - 0.5) = 500. `event_first` prints the event line before
/// the step's line. MFU = 500 / 1042.
inline Expected event_inside_slow_step(bool event_first, const std::string& kind = "checkpoint") {
  Expected e;
  e.name = kind + " event inside its slow step" + (event_first ? " (event printed first)" : "");
  e.file = "event.jsonl";
  e.text = native_meta();
  const std::string ev = R"({"type":"event","kind":")" + kind +
                         R"(","step":500,"duration_s":42.0})"
                         "\n";
  for (int i = 1; i <= 1000; ++i) {
    if (i == 500 && event_first) e.text += ev;
    e.text += native_step(i, i == 500 ? 43.0 : 1.0, 1.248e15, "");
    if (i == 500 && !event_first) e.text += ev;
  }
  e.wall_s = 1042;
  e.buckets = {
      {"compute", 500}, {kind == "checkpoint" ? "checkpoint" : "eval", 42}, {"other", 500}};
  e.mfu = e.mfu_steady = 500.0 / 1042;
  return e;
}

/// Class 3: clocks that lie. 20 Megatron lines of 10 x 1 s at 50% (156 TFLOP/s per GPU),
/// their timestamps 10 s apart except where the clock jumps: after line 10 by `jump_s`
/// (+3600 or -3600: a daylight-saving change of a local-time clock). The right wall time is
/// the steps' 200 s (the first line's 10 s start before its timestamp), compute 100, the rest
/// unattributed 100; MFU 50%. `glog_new_year` writes year-less glog prefixes that cross
/// 31 Dec -> 1 Jan instead (the clock reads 365 days back); `clock_rate` < 1 makes the clock
/// advance slower than the printed step times (0.9: 9 s per 10 s line), which contradicts
/// them: the record durations are used, wall 200 s again.
inline Expected megatron_clock(double jump_s, bool glog_new_year = false, double clock_rate = 1.0) {
  Expected e;
  e.name = glog_new_year ? "glog timestamps across New Year"
           : clock_rate != 1.0
               ? "clock slower than the steps"
               : (jump_s > 0 ? "daylight saving, clock +1 h" : "daylight saving, clock -1 h");
  e.file = "clock.log";
  e.needs_hardware_flags = true;
  double ts = glog_new_year ? 1704067200.0 - 100 : 1711828800.0;  // 31 Dec 2023 23:58:20
  for (int it = 10; it <= 200; it += 10) {
    ts += 10 * clock_rate;
    if (it == 110) ts += jump_s;
    std::string line = megatron_line(static_cast<std::time_t>(ts), it, 200, 1000.0, 156.0);
    if (glog_new_year) {
      const auto t = static_cast<std::time_t>(ts);
      char g[64];
      std::strftime(g, sizeof g, "I%m%d %H:%M:%S.000000 4242 training.py:42]", std::gmtime(&t));
      line = g + line.substr(line.find(']') + 1);
    }
    e.text += line;
  }
  e.wall_s = 200;
  e.buckets = {{"compute", 100}, {"other", 100}};
  e.mfu = e.mfu_steady = 0.5;
  return e;
}

/// Class 4: values that mean "not measured". 100 native steps of 1 s at 50% with 131072
/// tokens and data_s 0.1; step 5 writes data_s -1, step 6 tokens -1, step 7 model_flops -1,
/// step 8 comm_s -1. Each is unknown (with a warning naming its line); step 7 gets the FLOPs
/// of the records with the same tokens (1.248e15). Wall 100 s, compute 50, io 99 x 0.1 = 9.9,
/// unattributed 40.1; MFU 50%.
inline Expected sentinel_values() {
  Expected e;
  e.name = "-1 written for not measured";
  e.file = "sentinel.jsonl";
  e.text = native_meta();
  for (int i = 1; i <= 100; ++i) {
    const double flops = i == 7 ? -1.0 : 1.248e15;
    const std::string tokens = i == 6 ? R"(,"tokens":-1)" : R"(,"tokens":131072)";
    std::string phases = i == 5 ? R"("data_s":-1)" : R"("data_s":0.1)";
    if (i == 8) phases += R"(,"comm_s":-1)";
    e.text += native_step(i, 1.0, flops, phases, tokens);
  }
  e.wall_s = 100;
  e.buckets = {{"compute", 50}, {"io", 9.9}, {"other", 40.1}};
  e.mfu = e.mfu_steady = 0.5;
  return e;
}

/// Class 5: a long warm-up. 100 steps of 2.5 s, then 300 steps of 1 s, all at 4.992e14 FLOPs
/// (0.2 s at peak). The warm-up ends at step 101 (no fixed cap): steady MFU = 0.2 / 1 = 20%.
/// Wall 250 + 300 = 550 s: compute 400 x 0.2 = 80; startup (warm-up above the steady pace)
/// 100 x 1.5 = 150; unattributed 400 x 0.8 = 320. MFU 80 / 550.
inline Expected long_warmup() {
  Expected e;
  e.name = "100 warm-up steps";
  e.file = "warmup.jsonl";
  e.text = native_meta();
  for (int i = 1; i <= 400; ++i) e.text += native_step(i, i <= 100 ? 2.5 : 1.0, 4.992e14, "");
  e.wall_s = 550;
  e.buckets = {{"compute", 80}, {"startup", 150}, {"other", 320}};
  e.mfu = 80.0 / 550;
  e.mfu_steady = 0.2;
  return e;
}

/// Class 6: the last Megatron line is cut before its TFLOP/s field (the job was killed while
/// printing). 20 lines of 10 x 1 s at 156 TFLOP/s per GPU (50%), the 20th cut: its
/// 10 s either get the FLOPs of their configuration or leave MFU's numerator and denominator
/// alike; either way MFU = 50% (not 95 / 200 = 47.5%). Wall 200 s.
inline Expected megatron_cut_last_line() {
  Expected e;
  e.name = "last line cut before TFLOP/s";
  e.file = "cut.log";
  e.needs_hardware_flags = true;
  std::time_t ts = 1711828800;
  for (int it = 10; it <= 200; it += 10) {
    ts += 10;
    e.text += megatron_line(ts, it, 200, 1000.0, 156.0, it == 200);
  }
  e.wall_s = 200;
  e.mfu = e.mfu_steady = 0.5;
  return e;
}

/// Class 7: one impossible record. 100 native steps of 1 s at 50%; step 50 prints 0.002 s
/// (asynchronous dispatch returned before the device finished): 1.248e15 FLOPs in 2 ms is
/// 250x the peak. It is left out with a warning: wall 99 s, compute 49.5, unattributed 49.5;
/// MFU 50%.
inline Expected one_impossible_record() {
  Expected e;
  e.name = "one record faster than the peak";
  e.file = "impossible.jsonl";
  e.text = native_meta();
  for (int i = 1; i <= 100; ++i) e.text += native_step(i, i == 50 ? 0.002 : 1.0, 1.248e15, "");
  e.wall_s = 99;
  e.buckets = {{"compute", 49.5}, {"other", 49.5}};
  e.mfu = e.mfu_steady = 0.5;
  return e;
}

/// The bulk impossible: 100 steps of 0.1 s at 1.248e15 FLOPs (500% of the peak): refused.
inline std::string mostly_impossible() {
  std::string t = native_meta();
  for (int i = 1; i <= 100; ++i) t += native_step(i, 0.1, 1.248e15, "");
  return t;
}

}  // namespace mfu::crafted
