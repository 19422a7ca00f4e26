// The native JSON Lines / CSV format, format detection, and the tolerances every reader needs.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/gpu.hpp"
#include "mfu/ingest.hpp"
#include "mfu/report.hpp"
#include "test_util.hpp"

namespace mfu {
namespace {

TEST(NativeFormat, ReadsMetaStepsPhasesAndEvents) {
  const mfu::Run r = ingest_text(
      R"({"type":"meta","gpu":"h100-sxm","gpus":16,"dtype":"bf16","model":"llama3-8b","seq_len":8192}
{"step":1,"time_s":0.330,"model_flops":3.5e13,"tokens":131072,"phases":{"forward_s":0.100,"backward_s":0.150,"comm_s":0.080,"data_s":0.0},"extra":{"kept":"out of the way"}}
{"step":2,"time_ms":320,"phases":{"comm_ms":70}}
{"type":"event","kind":"checkpoint","step":500,"duration_s":42.0}
)",
      "run.jsonl");
  EXPECT_EQ(r.format, "native");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_DOUBLE_EQ(r.iterations[0].time_s, 0.330);
  EXPECT_NEAR(r.iterations[0].at(Phase::kComm), 0.080, 1e-7);
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 0.320);
  EXPECT_NEAR(r.iterations[1].at(Phase::kComm), 0.070, 1e-7);
  EXPECT_EQ(r.meta.text("gpu_name"), "h100-sxm");
  EXPECT_EQ(r.meta.number("gpus"), 16);
  EXPECT_EQ(r.meta.text("model_name"), "llama3-8b");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, EventKind::kCheckpointSave);
  EXPECT_DOUBLE_EQ(r.events[0].duration_s, 42.0);
}

// The fast scanner reads strings without escapes; a key or value with one goes to the full JSON
// parser, which decodes it. Line 3 spells "time_s" with an escape at the memo's slot of the
// line before: read as written, it would be an unknown key and step 2 would have no time.
// The reader reuses one record from line to line: an event takes its step, rank and time from
// its own line, and nothing (a detail, a duration) from an event or a step before it.
TEST(NativeFormat, EachEventLineStandsAlone) {
  const mfu::Run r = ingest_text(
      R"({"type":"event","kind":"eval","step":3,"rank":2,"timestamp_ms":1700000000500,"duration_s":4.5,"detail":"val"}
{"step":4,"time_s":1.0,"rank":1,"timestamp":1700000001}
{"type":"event","kind":"checkpoint","step":5}
{"type":"event","kind":"mystery"}
)",
      "run.jsonl");
  ASSERT_EQ(r.events.size(), 3u);
  const Event& eval = r.events[0];
  EXPECT_EQ(eval.kind, EventKind::kEval);
  EXPECT_EQ(eval.step, 3);
  EXPECT_EQ(eval.rank, 2);
  EXPECT_DOUBLE_EQ(eval.timestamp_s, 1700000000.5);
  EXPECT_DOUBLE_EQ(eval.duration_s, 4.5);
  EXPECT_EQ(eval.detail, "val");
  EXPECT_EQ(eval.line, 1u);
  const Event& save = r.events[1];
  EXPECT_EQ(save.kind, EventKind::kCheckpointSave);
  EXPECT_EQ(save.step, 5);
  EXPECT_EQ(save.rank, -1);
  EXPECT_TRUE(std::isnan(save.timestamp_s));
  EXPECT_TRUE(std::isnan(save.duration_s));
  EXPECT_EQ(save.detail, "checkpoint");
  EXPECT_EQ(save.line, 3u);
  const Event& other = r.events[2];
  EXPECT_EQ(other.kind, EventKind::kOther);
  EXPECT_EQ(other.step, -1);
  EXPECT_EQ(other.detail, "mystery");
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].step, 4);
  EXPECT_EQ(r.iterations[0].rank, 1);
}

TEST(NativeFormat, EscapedKeysAndValuesAreDecodedNotReadAsWritten) {
  const mfu::Run r = ingest_text(
      "{\"step\":1,\"time_s\":0.5}\n"
      "{\"step\":2,\"ti\\u006de_s\":0.25}\n"
      "{\"type\":\"event\",\"kind\":\"checkpoint\",\"detail\":\"save "
      "\\\"a\\\"\",\"duration_s\":2}\n"
      "{\"step\":3,\"time_s\":0.75,\"note\":\"x\\\\y\"}\n",
      "escapes.jsonl");
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_DOUBLE_EQ(r.iterations[1].time_s, 0.25);
  EXPECT_DOUBLE_EQ(r.iterations[2].time_s, 0.75);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].detail, "save \"a\"");
  EXPECT_EQ(r.malformed_lines, 0u);
}

// The scanner predicts each key from the line before (KeyMemo); a prediction is only a
// shortcut, so any mix of layouts must read as each line does alone. Generated lines shuffle
// their keys, change units, and use keys that extend one another ("time_s" and "time_sx",
// "comm" and "comm_ms", the same name inside and outside "phases") or differ only in their last
// character ("time_s" and "time_x"), so a prediction that matched a prefix, compared too few
// characters, or took a key from the other object, would change a value. Each line's time and comm
// are known by hand: time_s = v, time_ms = v / 1000; comm = c, comm_ms = c / 1000.
TEST(NativeFormat, KeysPredictedFromTheLineBeforeReadAsEachLineAlone) {
  std::mt19937 rng(7);
  std::string text;
  std::vector<double> want_time, want_comm;
  std::vector<std::string> lines;
  std::vector<std::string> layout;  // kept for a few lines, then shuffled
  for (int step = 1; step <= 400; ++step) {
    const double v = 100 + static_cast<double>(rng() % 900), c = static_cast<double>(rng() % 50);
    const bool ms = rng() % 2, comm_ms = rng() % 2;
    std::vector<std::string> fields = {
        ms ? fmt::format("\"time_ms\":{}", v) : fmt::format("\"time_s\":{}", v),
        fmt::format("\"time_sx\":{}", v + 1), fmt::format("\"time_x\":{}", v + 3),
        fmt::format("\"loss\":{}", c + 2),
        fmt::format("\"phases\":{{\"{}\":{},\"time_s\":9}}", comm_ms ? "comm_ms" : "comm", c)};
    if (rng() % 3 == 0) fields.erase(fields.begin() + 1 + static_cast<long>(rng() % 3));
    if (layout.empty() || rng() % 4 == 0) std::shuffle(fields.begin(), fields.end(), rng);
    std::string line = fmt::format("{{\"step\":{}", step);
    for (const std::string& f : fields) line += (rng() % 5 == 0 ? " , " : ",") + f;
    line += "}";
    layout = fields;
    lines.push_back(line);
    text += line + "\n";
    want_time.push_back(ms ? v / 1000 : v);
    want_comm.push_back(comm_ms ? c / 1000 : c);
  }
  const mfu::Run all = ingest_text(text, "layouts.jsonl");
  ASSERT_EQ(all.iterations.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const mfu::Run alone = ingest_text(lines[i] + "\n", "line.jsonl");
    ASSERT_EQ(alone.iterations.size(), 1u) << lines[i];
    EXPECT_DOUBLE_EQ(all.iterations[i].time_s, want_time[i]) << lines[i];
    EXPECT_EQ(all.iterations[i].time_s, alone.iterations[0].time_s) << lines[i];
    EXPECT_DOUBLE_EQ(all.iterations[i].at(Phase::kComm), want_comm[i]) << lines[i];
    EXPECT_EQ(all.iterations[i].at(Phase::kComm), alone.iterations[0].at(Phase::kComm)) << lines[i];
  }
}

// Numbers under keys that are no field ("lr", "peak_flops") are skipped unparsed on a step line
// and read only on a meta line. Generated meta lines print such a number in every JSON form (a
// sign, leading zero, fraction, exponent of 1 to 3 digits, up to 22 digits: some forms are read
// at once, some are left to the full parse); each must give the value the simdjson path gives
// for the same line (an escaped string sends a line there) and, for the plain forms, the value
// computed from the digits by hand. Each step line's own fields are read as they are without
// the extra keys, and a step line with an unused number out of a double's range or not JSON
// ("1e999", "0123") is refused as the simdjson path refuses it.
TEST(NativeFormat, NumbersOfUnusedKeysReadOnlyOnMetaLinesAsTheFullParseReadsThem) {
  std::mt19937 rng(11);
  const auto digits = [&](int n) {
    std::string d;
    for (int k = 0; k < n; ++k) d += static_cast<char>('0' + rng() % 10);
    return d;
  };
  for (int round = 0; round < 400; ++round) {
    std::string whole = rng() % 4 == 0 ? "0" : std::to_string(1 + rng() % 9) + digits(rng() % 12);
    std::string number = (rng() % 3 == 0 ? "-" : "") + whole;
    const std::string frac = rng() % 2 ? digits(1 + static_cast<int>(rng() % 11)) : "";
    if (!frac.empty()) number += "." + frac;
    std::string exp;
    if (rng() % 2) {
      exp = std::string(rng() % 2 ? "e" : "E") +
            (rng() % 3 == 0 ? "-"
             : rng() % 2    ? "+"
                            : "") +
            std::to_string(rng() % (rng() % 4 == 0 ? 400 : 30));
      number += exp;
    }
    const std::string fast = fmt::format(
        "{{\"type\":\"meta\",\"gpus\":8,\"lr\":{0},\"peak_flops\":{0},\"x\":1}}\n", number);
    const std::string slow = fmt::format(
        "{{\"type\":\"meta\",\"gpus\":8,\"lr\":{0},\"peak_flops\":{0},\"x\":1,"
        "\"note\":\"\\u0061\"}}\n",
        number);
    const mfu::Run a = ingest_text(fast, "meta.jsonl"), b = ingest_text(slow, "meta.jsonl");
    const std::optional<double> got = a.meta.number("lr"), want = b.meta.number("lr");
    ASSERT_EQ(got.has_value(), want.has_value()) << number;
    if (got) {
      EXPECT_EQ(*got, *want) << number;
      EXPECT_EQ(a.meta.number("peak_flops"), b.meta.number("peak_flops")) << number;
    }
    // By hand, where the digits and the exponent make an exact quotient of doubles.
    const std::string all_digits = whole + frac;
    if (got && all_digits.size() <= 15 && exp.empty() && frac.size() <= 15) {
      const double m = std::stod(all_digits);
      const double by_hand = m / std::pow(10.0, static_cast<double>(frac.size()));
      EXPECT_EQ(std::fabs(*got), by_hand) << number;
    }
  }
  // Step lines: the extra keys change nothing, or refuse the line as the full parse does.
  const mfu::Run plain = ingest_text(
      "{\"step\":1,\"time_s\":0.5,\"lr\":1.5e-4}\n"
      "{\"step\":2,\"time_s\":0.25,\"grad_norm\":-0.0}\n",
      "steps.jsonl");
  ASSERT_EQ(plain.iterations.size(), 2u);
  EXPECT_EQ(plain.iterations[1].time_s, 0.25);
  EXPECT_EQ(plain.malformed_lines, 0u);
  const std::string huge = "1" + std::string(400, '0');  // past a double's range
  for (const std::string& bad :
       {std::string("1e999"), huge, huge + ".5", std::string("1.5.2"), std::string("-"),
        std::string("1e"), std::string("1e+"), std::string("--1"), std::string("1e5e")}) {
    const std::string line = fmt::format("{{\"step\":1,\"time_s\":0.5,\"lr\":{}}}\n", bad);
    const std::string escaped =
        fmt::format("{{\"step\":1,\"time_s\":0.5,\"lr\":{},\"n\":\"\\u0061\"}}\n", bad);
    const mfu::Run r = ingest_text(line, "bad.jsonl"), ref = ingest_text(escaped, "bad.jsonl");
    EXPECT_EQ(r.iterations.size(), ref.iterations.size()) << bad;
    EXPECT_EQ(r.malformed_lines, 1u) << bad;
    EXPECT_EQ(r.malformed_lines, ref.malformed_lines) << bad;
  }
  // Forms outside JSON that the scanner's number reader has always taken (simdjson refuses
  // them): left to that reader, so a step line with one reads as it did.
  for (const char* lenient : {"0123", "1.", "-.5"}) {
    const mfu::Run r = ingest_text(
        fmt::format("{{\"step\":1,\"time_s\":0.5,\"lr\":{}}}\n", lenient), "lenient.jsonl");
    EXPECT_EQ(r.iterations.size(), 1u) << lenient;
  }
}

// Without keep_loss, a plain number under "loss" is checked, not read; the run still says it had
// a loss exactly where the full parse (simdjson, which an escaped string sends a line to) says
// so: numbers of every form, unknowns, a string, values out of range, forms outside JSON, a
// repeated key (the last stands), and lines that are no step record.
TEST(NativeFormat, AnUnreadLossIsLeftOutAsTheFullParseLeavesItOut) {
  IngestOptions drop;
  drop.keep_loss = false;
  const std::string huge = "1" + std::string(400, '0');
  const std::vector<std::string> losses{"2.5",
                                        "0",
                                        "-0.0",
                                        "9.99201",
                                        "1e-05",
                                        "2.480588E+00",
                                        "12345678901234567890",
                                        "1e999",
                                        huge,
                                        "null",
                                        "NaN",
                                        "\"2.5\"",
                                        "Infinity",
                                        "1.5.2",
                                        "-",
                                        "3, \"loss\": null",
                                        "null, \"loss\": 4.5"};
  for (const std::string& loss : losses) {
    for (const char* line :
         {"{{\"step\":1,\"time_s\":0.5,\"loss\":{}{}}}\n",
          "{{\"time_s\":0.5,\"loss\":{}{}}}\n",  // no step: malformed
          "{{\"type\":\"event\",\"kind\":\"eval\",\"step\":1,\"loss\":{}{}}}\n"}) {
      // A plain step line first: the format is told by its lines.
      const std::string first = "{\"step\":0,\"time_s\":0.5}\n";
      const std::string fast = first + fmt::format(fmt::runtime(line), loss, "");
      const std::string full = first + fmt::format(fmt::runtime(line), loss, ",\"n\":\"\\u0061\"");
      const mfu::Run a = ingest_text(fast, "loss.jsonl", drop);
      const mfu::Run b = ingest_text(full, "loss.jsonl", drop);
      SCOPED_TRACE(fast);
      EXPECT_EQ(a.loss_left_out, b.loss_left_out);
      EXPECT_EQ(a.fields, b.fields);
      EXPECT_EQ(a.iterations.size(), b.iterations.size());
      EXPECT_EQ(a.events.size(), b.events.size());
      EXPECT_EQ(a.malformed_lines, b.malformed_lines);
      for (std::size_t i = 0; i < a.iterations.size(); ++i)
        EXPECT_TRUE(std::isnan(a.iterations[i].loss));
    }
  }
  // Forms outside JSON that the scanner's number reader has always taken (simdjson refuses
  // them): still read there, so the record had a loss.
  for (const char* lenient : {"0123", "1."}) {
    const mfu::Run r = ingest_text(
        fmt::format("{{\"step\":1,\"time_s\":0.5,\"loss\":{}}}\n", lenient), "a.jsonl", drop);
    EXPECT_EQ(r.iterations.size(), 1u) << lenient;
    EXPECT_TRUE(r.loss_left_out) << lenient;
  }
  // By hand: a step record with a plain loss had one (left out); with null or NaN it had none.
  EXPECT_TRUE(
      ingest_text("{\"step\":1,\"time_s\":0.5,\"loss\":2.5}\n", "a.jsonl", drop).loss_left_out);
  EXPECT_FALSE(
      ingest_text("{\"step\":1,\"time_s\":0.5,\"loss\":null}\n", "a.jsonl", drop).loss_left_out);
  EXPECT_FALSE(
      ingest_text("{\"step\":1,\"time_s\":0.5}\n{\"time_s\":0.5,\"loss\":2.5}\n", "a.jsonl", drop)
          .loss_left_out);
}

// Without keep_loss the records carry no loss and the store holds no loss column, while the
// fields recovered still name it and the analysis is the same bit for bit (it never reads the
// loss); on the streaming reader and on the parallel one that cuts the file into pieces. Only
// the second half of the records gives a loss, so in pieces only a later piece sees one. Kept,
// the 100,000 varying losses are plain storage: 400,000 bytes or more.
TEST(NativeFormat, LossLeftOutOnlyWhereNoReportShowsIt) {
  constexpr int kRecords = 200000;
  std::string text = "{\"type\":\"meta\",\"gpus\":8,\"gpu\":\"h100-sxm\"}\n";
  for (int s = 1; s <= kRecords; ++s) {
    text += fmt::format("{{\"step\":{},\"time_s\":0.{},\"model_flops\":2e15", s, 500 + s % 7);
    if (s > kRecords / 2) text += fmt::format(",\"loss\":{}.{}", 9 - s % 5, s % 997);
    text += "}\n";
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("mfu-loss-" + std::to_string(::getpid()) + ".jsonl");
  test::write_file(path, text);
  const GpuDatabase db = GpuDatabase::builtin();
  for (const std::uint64_t parallel_from : {std::uint64_t{1} << 40, std::uint64_t{1}}) {
    IngestOptions keep;
    keep.parallel_min_bytes = parallel_from;
    keep.threads = 2;
    IngestOptions drop = keep;
    drop.keep_loss = false;
    const mfu::Run with = ingest({path.string()}, keep);
    const mfu::Run without = ingest({path.string()}, drop);
    ASSERT_EQ(with.iterations.size(), static_cast<std::size_t>(kRecords));
    ASSERT_EQ(without.iterations.size(), with.iterations.size());
    // Step 200,000 printed "9.600" (9 - 200,000 % 5, then 200,000 % 997 = 600).
    EXPECT_FLOAT_EQ(static_cast<float>(with.iterations[kRecords - 1].loss), 9.6F);
    EXPECT_TRUE(std::isnan(with.iterations[0].loss));
    EXPECT_TRUE(std::isnan(without.iterations[kRecords - 1].loss));
    // The loss is still among the fields the log gave (what inspect and a refusal list).
    EXPECT_NE(std::find(with.fields.begin(), with.fields.end(), "loss"), with.fields.end());
    EXPECT_EQ(without.fields, with.fields) << parallel_from;
    EXPECT_GE(with.iterations.memory_bytes(), without.iterations.memory_bytes() + 4 * kRecords / 2)
        << parallel_from;
    std::ostringstream json_with, json_without;
    render_analysis(analyze(with, {}, db), with, OutputFormat::kJson, {}, json_with);
    render_analysis(analyze(without, {}, db), without, OutputFormat::kJson, {}, json_without);
    EXPECT_EQ(json_with.str(), json_without.str()) << parallel_from;
  }
  std::filesystem::remove(path);
}

TEST(NativeFormat, ReadsTheCsvForm) {
  const mfu::Run r = ingest_text(
      "step,time_s,model_flops,tokens,forward_s,backward_s,comm_s,data_s\n"
      "1,0.330,3.5e13,131072,0.100,0.150,0.080,0.0\n"
      "2,0.331,3.5e13,131072,0.100,0.150,0.081,0.0\n",
      "run.csv");
  EXPECT_EQ(r.format, "native-csv");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_NEAR(r.iterations[1].at(Phase::kComm), 0.081, 1e-7);
}

TEST(NativeFormat, PythonNanAndInfinityAreReadAndBadTimesSkippedWithTheirLine) {
  const mfu::Run r = ingest_text(
      "{\"step\":1,\"time_s\":0.33,\"loss\":NaN}\n"
      "{\"step\":2,\"time_s\":NaN}\n"
      "{\"step\":3,\"time_s\":-1}\n"
      "{\"step\":4,\"time_s\":0}\n"
      "{\"step\":5,\"time_s\":Infinity}\n"
      "{\"step\":6,\"time_s\":0.33}\n",
      "nan.jsonl");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_EQ(r.malformed_lines, 4u);
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].line, 2u);
}

TEST(NativeFormat, TruncatedLastLineIsADiagnosticWithItsLineNumber) {
  const mfu::Run r =
      ingest_text("{\"step\":1,\"time_s\":0.33}\n{\"step\":2,\"time_s\":0.3", "cut.jsonl");
  EXPECT_EQ(r.iterations.size(), 1u);
  EXPECT_TRUE(r.truncated);
  // The malformed line, then that the file ends inside it.
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].line, 2u);
  EXPECT_EQ(r.diagnostics[1].line, 2u);
  EXPECT_NE(r.diagnostics[1].message.find("ends in the middle"), std::string::npos);
}

TEST(NativeFormat, StrictModeMakesAMalformedLineAnErrorWithItsLocation) {
  IngestOptions o;
  o.strict = true;
  try {
    (void)ingest_text("{\"step\":1,\"time_s\":0.33}\n{\"step\":2,\"time_s\":\"abc\"}\n{oops\n",
                      "bad.jsonl", o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where().line, 2u);  // "time_s":"abc" is not a number
    EXPECT_EQ(e.where().file, "bad.jsonl");
  }
}

TEST(NativeFormat, DiagnosticsAreCappedAndCounted) {
  std::string s = "{\"step\":1,\"time_s\":0.33}\n";
  for (int i = 0; i < 100; ++i) s += "{broken\n";
  const mfu::Run r = ingest_text(s, "many.jsonl");
  EXPECT_EQ(r.malformed_lines, 100u);
  EXPECT_EQ(r.diagnostics.size(), 20u);
  EXPECT_EQ(r.suppressed_diagnostics, 80u);
}

// Metadata keys and texts are the log's bytes: control characters and broken UTF-8 included
// (fuzzing found a key with NUL bytes written raw: the copy's meta line was not JSON, and the
// copy lost the model, so its compute differed). Every line of the copy parses as JSON with
// nlohmann (a second parser), and the values read back.
TEST(Convert, ControlBytesInKeysAndTextsStayValidJson) {
  mfu::Run run;
  const std::string key(
      "\0\x01"
      "ab",
      4);
  run.meta.set(key, 16.0, "test");
  run.meta.set("model_name",
               std::string("x\x02"
                           "y\xff",
                           4),
               "test");
  std::ostringstream copy;
  write_native(run, copy);
  std::istringstream lines(copy.str());
  for (std::string line; std::getline(lines, line);) {
    SCOPED_TRACE(line);
    EXPECT_TRUE(nlohmann::json::accept(line));
  }
  const mfu::Run back = ingest_text(copy.str(), "copy.jsonl");
  EXPECT_EQ(back.meta.number(key), 16.0);
  // The reader shows a control character in a text as "\x02" (a log's text never reaches
  // a terminal raw) and a broken byte as U+FFFD.
  EXPECT_EQ(back.meta.text("model_name"), std::optional<std::string>("x\\x02y\xef\xbf\xbd"));
}

TEST(Convert, EveryExcerptConvertsToNativeAndBackToTheSameRun) {
  for (const char* name :
       {"megatron_megads_excerpt.log", "torchtitan_excerpt.log", "nanogpt_mfu.log",
        "mlperf_llama2_lora_h200.txt", "deepspeed_gptneox.log", "dschat_rlhf_excerpt.log",
        "maxtext_steps.log", "lightning_metrics.csv", "whisper_trainer_state.json"}) {
    SCOPED_TRACE(name);
    const mfu::Run a = ingest({test::test_data(name).string()});
    std::ostringstream native;
    write_native(a, native);
    const mfu::Run b = ingest_text(native.str(), "converted.jsonl");
    EXPECT_EQ(b.format, "native");
    ASSERT_EQ(a.iterations.size(), b.iterations.size());
    for (std::size_t i = 0; i < a.iterations.size(); ++i) {
      const Iteration x = a.iterations[i], y = b.iterations[i];
      EXPECT_EQ(x.step, y.step);
      EXPECT_EQ(x.count, y.count);
      auto same = [](double p, double q) { return (std::isnan(p) && std::isnan(q)) || p == q; };
      EXPECT_TRUE(same(x.time_s, y.time_s)) << x.time_s << " vs " << y.time_s;
      EXPECT_TRUE(same(x.tokens, y.tokens));
      EXPECT_TRUE(same(x.loss, y.loss));
      EXPECT_TRUE(same(x.reported_flops_per_gpu, y.reported_flops_per_gpu));
      for (std::size_t p = 0; p < kPhaseCount; ++p) EXPECT_TRUE(same(x.phase[p], y.phase[p]));
    }
    for (const auto& [k, v] : a.meta.all()) {
      if (const double* d = std::get_if<double>(&v.value)) {
        EXPECT_EQ(b.meta.number(k), *d) << k;
      }
    }
    std::size_t events_a = 0, events_b = 0;
    for (const auto& e : a.events) events_a += e.kind != EventKind::kRestart;
    for (const auto& e : b.events) events_b += e.kind != EventKind::kRestart;
    EXPECT_EQ(events_a, events_b);
  }
}

TEST(Detection, NamesTheFormatsTriedAndTheNearestForUnknownInput) {
  try {
    (void)ingest_text("hello\nthis is not a training log\niteration\n", "notes.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot tell the format"), std::string::npos);
    EXPECT_NE(e.hint().find("megatron"), std::string::npos);
    EXPECT_NE(e.hint().find("torchtitan"), std::string::npos);
  }
  try {
    (void)ingest_text("setting up pretrain_gpt with megatron\n", "almost.log");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nearest: megatron"), std::string::npos) << e.what();
  }
}

TEST(Detection, EmptyAndBinaryInputsAreClearErrors) {
  EXPECT_THROW((void)ingest_text("", "empty.log"), Error);
  std::string binary(4096, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>((i * 7919) % 256);
  try {
    (void)ingest_text(binary, "blob.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("binary"), std::string::npos);
  }
}

TEST(Detection, ForcedFormatIsUsedAndAnUnknownOneListsTheKnown) {
  IngestOptions o;
  o.format = "nanogpt";
  const mfu::Run r = ingest_text("iter 1: loss 2.0, time 100.0ms\n", "x.log", o);
  EXPECT_EQ(r.iterations.size(), 1u);
  o.format = "nope";
  EXPECT_THROW((void)ingest_text("iter 1: loss 2.0, time 100.0ms\n", "x.log", o), Error);
}

TEST(Tolerance, WindowsLineEndingsAnsiColoursAndStackTracesBetweenRecords) {
  const mfu::Run r = ingest_text(
      "iter 0: loss 4.2648, time 9371.81ms, mfu -100.00%\r\n"
      "Traceback (most recent call last):\r\n"
      "  File \"train.py\", line 1, in <module>\r\n"
      "\x1b[31mWARNING\x1b[0m something\r\n"
      "iter 10: loss 3.2202, time 893.76ms, mfu 16.68%\r\n",
      "crlf.log");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_NEAR(r.iterations[1].time_s, 0.89376, 1e-9);
}

TEST(Tolerance, InterleavedRankPrefixesAndTqdmCarriageReturns) {
  const mfu::Run r = ingest_text(
      "[rank0]:[titan] 2026-01-01 00:00:01,000 - root - INFO - step:  1  loss: 9.0  tps: 100  "
      "tflops: 1.0  mfu: 1.00%\n"
      "[rank1]:[titan] 2026-01-01 00:00:01,000 - root - INFO - step:  1  loss: 9.0  tps: 100  "
      "tflops: 1.0  mfu: 1.00%\n"
      "progress 10%\rprogress 20%\r[rank0]:[titan] 2026-01-01 00:00:02,000 - root - INFO - step:  "
      "2  loss: 8.0  tps: 100  tflops: 1.0  mfu: 1.00%\n",
      "ranks.log");
  ASSERT_EQ(r.iterations.size(), 2u);
  EXPECT_EQ(r.ranks.size(), 2u);
  EXPECT_NEAR(r.iterations[1].time_s, 1.0, 1e-9);  // from the timestamps
}

}  // namespace
}  // namespace mfu
