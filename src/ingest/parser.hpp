#pragma once
// The contract between the ingestion driver and the per-format parsers (src/ingest/<format>.cpp).
// A line parser sees the input one line at a time and reports records, events, metadata and
// diagnostics to a RunBuilder; a document parser gets the whole (bounded) text at once.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/line_prefix.hpp"
#include "mfu/ingest.hpp"
#include "mfu/run.hpp"

namespace mfu::detail {

class ByteSource;

/// Adds `d` to the run's diagnostics, or counts it as suppressed once `cap` are kept: a log that
/// is garbage from end to end must not grow a report without bound.
void add_diagnostic(Run& run, Diagnostic d, std::size_t cap);

/// Moves every diagnostic of `from` into `into` under `cap`, keeping `from`'s suppressed count.
void merge_diagnostics(Run& into, Run& from, std::size_t cap);

/// Adds what `from` saw to `into`: fields and ranks (a union), the clock's first and last
/// timestamps (the wider span), lines and bytes read (sums). For pieces or inputs of one run.
void merge_seen(Run& into, const Run& from);

/// "file:9 says gpus = 16, but file:1 said 8: the first value is kept ...".
[[nodiscard]] std::string meta_conflict_message(const std::string& key, const MetaValue& kept,
                                                const MetaValue& other);

/// Collects what a parser finds for one input file.
class RunBuilder {
 public:
  RunBuilder(Run& run, const IngestOptions& options, std::string label, std::uint16_t file_index);

  /// Adds a record. One made from the current line (its `line` is the current line's number)
  /// takes the rank and timestamp of that line's prefixes when it has none of its own.
  void add(Iteration it);
  [[nodiscard]] bool has_last() const { return !run.iterations.empty(); }
  [[nodiscard]] Iteration last() const { return run.iterations.back(); }
  void replace_last(Iteration it);
  void add_event(Event e);

  /// The line being parsed: its number and what its peeled prefixes said (the line layer
  /// calls this before handing the body to the parser).
  void set_line(std::uint64_t number, const LineAttrs& attrs);
  [[nodiscard]] const LineAttrs& line_attrs() const { return line_; }
  /// The current line's timestamp: its prefix's, else one found in `body`; NaN when none.
  [[nodiscard]] double line_timestamp(std::string_view body) const;
  /// The current line's rank tag, else one found in `body`; -1 when none.
  [[nodiscard]] std::int32_t line_rank(std::string_view body) const;

  void meta(std::string_view key, double value, std::uint64_t line, bool overwrite = true);
  void meta(std::string_view key, const std::string& value, std::uint64_t line,
            bool overwrite = true);

  /// Sets `key` unless it is set already: the first value wins, in every reader (streaming,
  /// parallel pieces). A later, different value is a warning naming both lines.
  void meta_first(const std::string& key, const MetaValue::Value& value, std::uint64_t line);

  /// A record-looking line that did not parse: counted, warned (capped), an error when strict.
  void malformed(std::uint64_t line, const std::string& message);
  void warn(std::uint64_t line, const std::string& message);
  void info(std::uint64_t line, const std::string& message);

  /// Wall-clock time seen on a line (any line), for startup and teardown.
  void timestamp(double unix_s);
  /// Notes that a per-iteration field was recovered ("time", "loss", "tokens", ...).
  void field(const char* name);
  void saw_rank(std::int32_t rank);

  /// Places year-less timestamps (absl) in the year of the dated ones; call once at the end.
  void finish();

  /// "file:line" for metadata sources and messages.
  [[nodiscard]] std::string where(std::uint64_t line) const;
  /// Notes that a record had a loss the options leave out (a reader that did not read it).
  void loss_left_out() { run.loss_left_out = true; }
  [[nodiscard]] const std::string& label() const { return label_; }

  Run& run;
  const IngestOptions& options;
  const std::uint16_t file_index;
  std::uint64_t last_malformed_line = 0;  ///< for "the last line is cut off"

 private:
  void diagnostic(Diagnostic::Severity s, std::uint64_t line, const std::string& message);
  /// Clears the loss of `it` when the options leave it out, noting that the run had one.
  void drop_loss_unless_kept(Iteration& it);
  std::string label_;
  std::uint64_t line_number_ = 0;
  LineAttrs line_;
  double first_yearless_ = kUnknown;
  double last_yearless_ = kUnknown;
};

class LineParser {
 public:
  virtual ~LineParser() = default;
  /// `text` is valid only during the call.
  virtual void line(std::string_view text, std::uint64_t number) = 0;
  virtual void finish() {}
};

/// FormatSpec::make_line_parser for a parser class constructed from the RunBuilder.
template <class Parser>
std::unique_ptr<LineParser> make_line_parser(RunBuilder& out) {
  return std::make_unique<Parser>(out);
}

struct FormatSpec {
  const char* name;
  const char* description;
  /// Evidence that `head` (the first MiB of the input) is this format; 0 = none.
  double (*sniff)(std::string_view head, std::string_view filename);
  /// Exactly one of these is set.
  std::unique_ptr<LineParser> (*make_line_parser)(RunBuilder& out);
  void (*parse_document)(std::string_view text, RunBuilder& out);
  void (*parse_stream)(ByteSource& source, RunBuilder& out);
  /// Largest input a document parser accepts.
  std::size_t document_limit;
  /// How this format times iterations.
  TimingKind timing;
  /// For line formats whose records do not depend on far-away lines: true for a line where a
  /// record starts and the parser's state can be rebuilt from that line alone. A large plain
  /// file is then cut at such lines and its pieces parsed in parallel. nullptr: never cut.
  bool (*record_start)(std::string_view line) = nullptr;
  /// Each record is one iteration unless it says otherwise (mfu's native format): a step
  /// counter that jumps means missing records, not averaged ones.
  bool single_iteration_records = false;
  /// Lines are parsed as they are, without prefix peeling (CSV, whose first column could be
  /// a timestamp that belongs to the table).
  bool raw_lines = false;
  /// A binary container (TFRecord): sniffed even where the head is not text.
  bool binary = false;
};

/// All formats in tie-break order.
[[nodiscard]] const std::vector<const FormatSpec*>& format_registry();
[[nodiscard]] const FormatSpec* find_format(std::string_view name);

// One accessor per format file.
const FormatSpec& native_jsonl_format();
const FormatSpec& native_csv_format();
const FormatSpec& megatron_format();
const FormatSpec& megatron_golden_format();
const FormatSpec& torchtitan_format();
const FormatSpec& hf_trainer_format();
const FormatSpec& hf_trainer_state_format();
const FormatSpec& deepspeed_format();
const FormatSpec& nanogpt_format();
const FormatSpec& mlperf_format();
const FormatSpec& maxtext_format();
const FormatSpec& lightning_csv_format();
const FormatSpec& kineto_format();
const FormatSpec& metadata_format();
const FormatSpec& nemo_format();
const FormatSpec& nanotron_format();
const FormatSpec& torchtune_format();
const FormatSpec& verl_format();
const FormatSpec& llamafactory_format();
const FormatSpec& fairseq_format();
const FormatSpec& olmo_format();
const FormatSpec& composer_format();
const FormatSpec& tensorboard_format();
const FormatSpec& wandb_history_format();
const FormatSpec& wandb_summary_format();
const FormatSpec& wandb_csv_format();
const FormatSpec& generic_format();
const FormatSpec& pattern_format();

/// Post-processing shared by every format: merges per-rank duplicates of one step, finds
/// restarts (the step counter goes back), sets how many iterations each record stands for,
/// derives step times from timestamps when the log prints none, and fills Run::fields.
void finalize_run(Run& run, TimingKind timing, bool single_iteration_records = false);
/// Makes the text a log put into the run (diagnostics, event details, field and file names)
/// safe to print: control characters become visible escapes (detail::printable). Metadata
/// text is made safe when it is set (RunMeta::set).
void make_printable(Run& run);

}  // namespace mfu::detail
