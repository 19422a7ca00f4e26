// fairseq's training progress (fairseq_cli/train.py and its progress_bar), three generations:
//   2018: "| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32, lr=0.001, ..."
//   2019: "| epoch 001:    450 / 1891 loss=11.521, ..., wps=52922, ups=0.5, wpb=104928,
//          bsz=5325, num_updates=445, lr=8.9e-05, ..., wall=882, train_wall=756"
//   2020+ (hydra): "2020-07-17 07:11:02 | INFO | train_inner | epoch 001:   2800 / 160368
//          loss=9.255, ..., wps=57.3, ups=0.04, wpb=1613, bsz=80, num_updates=2800, ...,
//          train_wall=13, wall=1236"
// One line every log_interval batches: a record stands for the updates since the previous line.
// wall is the seconds since training began, so the record's time is the difference of wall over
// the difference of num_updates; train_wall is the time inside the training steps, cumulative
// in 2019 and per interval since the hydra logger resets its meters at each line. wpb is the
// tokens of one update over all workers, bsz its sentences. The 2018 lines have no clock: the
// time of an update is wpb / wps there. "valid on 'valid' subset" lines are evaluations.
#include <fmt/format.h>

#include <cmath>

#include "ingest/common_meta.hpp"
#include "ingest/parser.hpp"
#include "ingest/text_scan.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

/// "epoch 001:    450 / 1891 loss=..." -> the position of "epoch ", npos otherwise.
std::size_t progress_at(std::string_view t) {
  const std::size_t p = t.find("epoch ");
  if (p == std::string_view::npos || !contains(t.substr(p), " / ")) return std::string_view::npos;
  if (!contains(t, "loss=") || (!contains(t, "wps=") && !contains(t, "ups="))) {
    return std::string_view::npos;
  }
  const std::string_view before = t.substr(0, p);
  const bool framed = starts_with(trim(before), "|") || contains(before, "| train_inner |");
  return framed ? p : std::string_view::npos;
}

/// "key=value" in the ", "-separated fields: the value's leading number ("1.27 (1.50)" -> 1.27).
std::optional<double> field(std::string_view fields, std::string_view key) {
  for (std::size_t p = fields.find(key); p != std::string_view::npos; p = fields.find(key, p + 1)) {
    const bool starts = p == 0 || fields[p - 1] == ' ';
    if (!starts || p + key.size() >= fields.size() || fields[p + key.size()] != '=') continue;
    std::string_view v = fields.substr(p + key.size() + 1);
    return take_number(v);
  }
  return std::nullopt;
}

class FairseqParser : public LineParser {
 public:
  explicit FairseqParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view raw, std::uint64_t number) override {
    const std::string_view t = trim(raw);
    const std::size_t at = progress_at(t);
    if (at != std::string_view::npos) {
      hydra_ = contains(t.substr(0, at), "train_inner");
      return progress(t.substr(at + 6), number);
    }
    // The validation's summary line; its progress lines ("subset  1000 / 1311") are not events.
    if (contains(t, "valid on '") && contains(t, "subset") && !contains(t, " / "))
      return validation(t, number);
    scanner_.scan(t, number, out_);
  }

  void finish() override {
    scanner_.finish(out_);
    if (rate_mismatch_ > 0)
      out_.warn(mismatch_line_,
                fmt::format("in {} lines the printed wps disagrees with wpb over the step time "
                            "from the wall clock (up to {:.0f}x): the clock is used, the rates "
                            "are not (fairseq's meters on TPU count one update per interval)",
                            rate_mismatch_, worst_ratio_));
  }

 private:
  /// "001:    450 / 1891 loss=11.521, ..." (or "010  2000 / 8223 loss=...").
  void progress(std::string_view s, std::uint64_t number) {
    const auto epoch = take_number(s);
    if (starts_with(s, ":")) s.remove_prefix(1);
    const auto batch = take_number(s);
    s = trim(s);
    if (!epoch || !batch || !starts_with(s, "/")) {
      out_.malformed(number, "a fairseq progress line without 'epoch E: N / M'");
      return;
    }
    s.remove_prefix(1);
    const auto per_epoch = take_number(s);
    const std::string_view f = s;
    Iteration it;
    it.line = static_cast<std::uint32_t>(number);
    const auto updates = field(f, "num_updates");
    // The 2018 lines count batches within the epoch: updates since the run began.
    const double step = updates     ? *updates
                        : per_epoch ? (*epoch - 1) * *per_epoch + *batch
                                    : *batch;
    it.step = as_step(step);
    if (auto v = field(f, "loss")) it.loss = *v;
    if (auto v = field(f, "wpb"); v && *v > 0) it.tokens = *v;
    if (auto v = field(f, "bsz"); v && *v > 0) it.samples = *v;
    if (known(it.tokens)) out_.field("tokens");
    timing(f, step, it, number);
    out_.add(it);
  }

  void timing(std::string_view f, double step, Iteration& it, std::uint64_t number) {
    const auto wall = field(f, "wall");
    const auto train_wall = field(f, "train_wall");
    const double since = step - last_step_;
    if (wall && since > 0 && *wall >= last_wall_) {
      it.count = static_cast<std::uint32_t>(std::min(since, 1e9));
      if (*wall > last_wall_) it.time_s = (*wall - last_wall_) / since;
      // Cumulative in 2019; the hydra logger resets it at every line (so on the first line
      // it covers the last interval only, not all the updates since the start).
      const double inside = !train_wall      ? kUnknown
                            : !hydra_        ? *train_wall - last_train_wall_
                            : last_step_ > 0 ? *train_wall
                                             : kUnknown;
      if (known(inside) && inside >= 0) it.at(Phase::kForwardBackward) = inside / since;
      last_wall_ = *wall;
      last_step_ = step;
      if (train_wall) last_train_wall_ = *train_wall;
    } else if (!wall) {
      const auto wps = field(f, "wps");
      if (wps && *wps > 0 && known(it.tokens)) it.time_s = it.tokens / *wps;
    }
    if (known(it.time_s)) out_.field("time");
    check_rate(f, it, number);
  }

  /// wps against wpb / time: the log's own rate and its clock must agree.
  void check_rate(std::string_view f, const Iteration& it, std::uint64_t number) {
    const auto wps = field(f, "wps");
    if (!wps || !(*wps > 0) || !known(it.time_s) || !known(it.tokens) || !field(f, "wall")) return;
    const double from_clock = it.tokens / it.time_s;
    const double ratio = std::max(from_clock / *wps, *wps / from_clock);
    if (!std::isfinite(ratio) || ratio < 3) return;
    if (rate_mismatch_++ == 0) mismatch_line_ = number;
    worst_ratio_ = std::max(worst_ratio_, ratio);
  }

  void validation(std::string_view t, std::uint64_t number) {
    Event e;
    e.kind = EventKind::kEval;
    e.line = static_cast<std::uint32_t>(number);
    e.detail = "validation";
    if (auto v = number_after(t, "num_updates")) e.step = as_step(*v);
    out_.add_event(e);
  }

  RunBuilder& out_;
  CommonMetaScanner scanner_;
  double last_step_ = 0, last_wall_ = 0, last_train_wall_ = 0;
  bool hydra_ = false;
  std::size_t rate_mismatch_ = 0;
  std::uint64_t mismatch_line_ = 0;
  double worst_ratio_ = 0;
};

double sniff_fairseq(std::string_view head, std::string_view) {
  return score_lines(head, [](std::string_view t) {
    return progress_at(t) != std::string_view::npos ? 3.0 : 0.0;
  });
}

}  // namespace

const FormatSpec& fairseq_format() {
  static const FormatSpec spec{"fairseq",
                               "fairseq progress lines '| epoch E: N / M loss=..., wps=...' "
                               "(2018, 2019 and hydra's train_inner)",
                               sniff_fairseq,
                               make_line_parser<FairseqParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kAveraged};
  return spec;
}

}  // namespace mfu::detail
