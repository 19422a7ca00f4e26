// TensorBoard event files (events.out.tfevents.*): TFRecord framing (tfrecord.hpp) around Event
// protos (proto/tensorboard/event.proto), each with a wall time, a step and a summary of
// tagged values: scalars as simple values (tensorboardX, torch.utils.tensorboard) or as rank-0
// tensors (TF2, the scalars plugin). This is where Megatron-LM's timers and throughput,
// torchtitan's metrics and MaxText's step times go when nobody keeps the console.
// One record per step that has a scalar of the tag table below; a step without a time tag is
// timed by the events' wall times (finalize). Megatron-LM writes every log_interval steps, its
// iteration-time the mean over the interval.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "ingest/parser.hpp"
#include "ingest/tfrecord.hpp"
#include "proto/tensorboard/event.pb.h"
#include "text.hpp"

namespace mfu::detail {
namespace {

enum class Target { kTime, kLoss, kSamples, kTokens, kFlopsPerGpu, kMfu, kPhase };

struct TagRule {
  const char* tag;
  Target target;
  double scale;  // to seconds, FLOP/s or a fraction
  Phase phase;   // for kPhase
};

// The scalar tags of each framework, and what they are (one table).
constexpr TagRule kTags[] = {
    // Megatron-LM, megatron/training/training.py training_log: seconds, the mean per iteration
    // over the log interval; "throughput" is TFLOP/s per GPU (--log-throughput); the timers
    // (--timing-log-level, timers.write) are seconds per iteration.
    {"iteration-time", Target::kTime, 1, Phase::kOther},
    {"lm loss", Target::kLoss, 1, Phase::kOther},
    {"batch-size", Target::kSamples, 1, Phase::kOther},
    {"throughput", Target::kFlopsPerGpu, 1e12, Phase::kOther},
    {"forward-backward-time", Target::kPhase, 1, Phase::kForwardBackward},
    {"optimizer-time", Target::kPhase, 1, Phase::kOptimizer},
    // torchtitan, torchtitan/components/metrics.py (MetricsProcessor.log).
    {"loss_metrics/global_avg_loss", Target::kLoss, 1, Phase::kOther},
    {"time_metrics/end_to_end(s)", Target::kTime, 1, Phase::kOther},
    {"time_metrics/data_loading(s)", Target::kPhase, 1, Phase::kData},
    {"tflops", Target::kFlopsPerGpu, 1e12, Phase::kOther},
    {"mfu(%)", Target::kMfu, 0.01, Phase::kOther},
    // MaxText, MaxText/metric_logger.py (write_metrics_to_tensorboard).
    {"perf/step_time_seconds", Target::kTime, 1, Phase::kOther},
    {"perf/per_device_tflops_per_sec", Target::kFlopsPerGpu, 1e12, Phase::kOther},
    {"learning/loss", Target::kLoss, 1, Phase::kOther},
};

const TagRule* rule_for(const std::string& tag) {
  for (const auto& r : kTags)
    if (tag == r.tag) return &r;
  return nullptr;
}

/// IEEE half and bfloat16 bits (as TensorProto.half_val stores them) to float.
float half_to_float(std::uint32_t h, bool bfloat) {
  if (bfloat) {
    const std::uint32_t bits = h << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  const int exp = static_cast<int>((h >> 10) & 0x1F);
  const double mant = static_cast<double>(h & 0x3FF);
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return static_cast<float>(sign * std::ldexp(mant, -24));
  if (exp == 31) return static_cast<float>(mant == 0 ? sign * INFINITY : NAN);
  return static_cast<float>(sign * std::ldexp(1024.0 + mant, exp - 25));
}

/// A rank-0 numeric tensor's value.
std::optional<double> tensor_scalar(const tensorboard::TensorProto& t) {
  if (t.float_val_size() > 0) return t.float_val(0);
  if (t.double_val_size() > 0) return t.double_val(0);
  if (t.int64_val_size() > 0) return static_cast<double>(t.int64_val(0));
  if (t.half_val_size() > 0)
    return half_to_float(static_cast<std::uint32_t>(t.half_val(0)),
                         t.dtype() == tensorboard::DT_BFLOAT16);
  if (t.int_val_size() > 0) return t.int_val(0);
  const std::string& raw = t.tensor_content();
  if (t.dtype() == tensorboard::DT_FLOAT && raw.size() >= 4) {
    float f;
    std::memcpy(&f, raw.data(), 4);
    return f;
  }
  if (t.dtype() == tensorboard::DT_DOUBLE && raw.size() >= 8) {
    double d;
    std::memcpy(&d, raw.data(), 8);
    return d;
  }
  return std::nullopt;
}

std::optional<double> scalar_of(const tensorboard::Summary::Value& v) {
  if (v.has_simple_value()) return v.simple_value();
  if (v.has_tensor()) return tensor_scalar(v.tensor());
  return std::nullopt;
}

class EventReader {
 public:
  explicit EventReader(RunBuilder& out) : out_(out) {}

  void read(ByteSource& src) {
    TfRecordReader records(src);
    std::string data;
    for (;;) {
      const auto status = records.next(data);
      if (status == TfRecordReader::Status::kEnd) break;
      if (!framing_ok(status, records)) {
        if (status == TfRecordReader::Status::kCorruptData) continue;
        break;
      }
      event(data, records.records());
    }
    flush();
    out_.run.lines_read = records.records();
    out_.run.bytes_read = records.offset();
    report(records.records());
  }

 private:
  /// Says what is wrong with the framing; true when the record can be used.
  bool framing_ok(TfRecordReader::Status status, const TfRecordReader& r) {
    using S = TfRecordReader::Status;
    const std::uint64_t n = r.records() + (status == S::kCorruptData ? 0 : 1);
    switch (status) {
      case S::kRecord: return true;
      case S::kCorruptData:
        out_.malformed(n, fmt::format("record {} (byte {}) does not match its checksum: the "
                                      "file is damaged there; the record is skipped",
                                      n, r.record_offset()));
        return false;
      case S::kCorruptLength:
        out_.warn(n, fmt::format("byte {}: the record's length does not match its checksum, so "
                                 "the records after it cannot be found; the file is read up to "
                                 "there (it is damaged, or not a TensorBoard event file)",
                                 r.record_offset()));
        return false;
      case S::kCutOff:
        out_.run.truncated = true;
        out_.warn(n, fmt::format("the file ends inside record {} (byte {}): the job was still "
                                 "writing it, or the copy is cut off",
                                 n, r.record_offset()));
        return false;
      case S::kEnd: return false;
    }
    return false;
  }

  void event(const std::string& data, std::uint64_t number) {
    tensorboard::Event e;
    if (!e.ParseFromString(data)) {
      out_.malformed(number, "a record that is not an Event message");
      return;
    }
    // Every event's wall time is the job's clock: the file_version record's is when the writer
    // opened, before the first step (start-up).
    if (e.wall_time() > 0) out_.timestamp(e.wall_time());
    if (!e.has_summary()) return;
    for (const auto& v : e.summary().value()) value(v, e, number);
  }

  void value(const tensorboard::Summary::Value& v, const tensorboard::Event& e,
             std::uint64_t number) {
    const auto x = scalar_of(v);
    if (!x) return;
    const TagRule* r = rule_for(v.tag());
    if (!r) {
      if (unused_.size() < 12) unused_.insert(v.tag());
      return;
    }
    if (!open_ || e.step() != it_.step) {
      flush();
      it_ = Iteration{};
      it_.step = e.step();
      it_.line = static_cast<std::uint32_t>(number);
      it_.timestamp_s = e.wall_time() > 0 ? e.wall_time() : kUnknown;
      open_ = true;
    }
    apply(*r, *x * r->scale);
  }

  void apply(const TagRule& r, double x) {
    switch (r.target) {
      case Target::kTime: it_.time_s = x; break;
      case Target::kLoss: it_.loss = x; break;
      case Target::kSamples: it_.samples = x; break;
      case Target::kTokens: it_.tokens = x; break;
      case Target::kFlopsPerGpu: it_.reported_flops_per_gpu = x; break;
      case Target::kMfu: it_.reported_mfu = x; break;
      case Target::kPhase: it_.at(r.phase) = x; break;
    }
    used_.insert(r.tag);
  }

  void flush() {
    if (!open_) return;
    open_ = false;
    if (known(it_.time_s) && !(it_.time_s > 0)) {
      out_.malformed(it_.line, fmt::format("step {}: step time {} s is not positive; skipped",
                                           it_.step, it_.time_s));
      return;
    }
    if (known(it_.time_s)) out_.field("time");
    if (known(it_.loss)) out_.field("loss");
    if (known(it_.reported_flops_per_gpu))
      out_.meta("framework_flops_by", "tensorboard", it_.line, false);
    if (known(it_.timestamp_s)) out_.timestamp(it_.timestamp_s);
    out_.add(it_);
  }

  void report(std::uint64_t records) {
    if (!unused_.empty())
      out_.info(0, fmt::format("scalar tags not read: {}", fmt::join(unused_, ", ")));
    if (out_.run.iterations.empty())
      out_.warn(0, fmt::format("the event file holds {} record(s) and no scalar mfu reads{}: "
                               "the job wrote no training metrics to it",
                               records, unused_.empty() ? " (no scalar at all)" : ""));
  }

  RunBuilder& out_;
  Iteration it_;
  bool open_ = false;
  std::set<std::string> used_, unused_;
};

void parse(ByteSource& src, RunBuilder& out) {
  EventReader(out).read(src);
}

double sniff_tensorboard(std::string_view head, std::string_view filename) {
  if (!looks_like_tfrecord(head)) return 0;
  return contains(filename, "tfevents") ? 20 : 10;
}

}  // namespace

const FormatSpec& tensorboard_format() {
  static const FormatSpec spec{"tensorboard",
                               "TensorBoard event files (events.out.tfevents.*): TFRecord "
                               "framing, scalar summaries of Megatron-LM, torchtitan, MaxText",
                               sniff_tensorboard,
                               nullptr,
                               nullptr,
                               parse,
                               0,
                               TimingKind::kAveraged,
                               nullptr,
                               false,
                               false,
                               true};
  return spec;
}

}  // namespace mfu::detail
