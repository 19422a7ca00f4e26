#pragma once
// Prefix peeling: what launchers, loggers and people put before a framework's own line.
//
// The grammar (one place; every text format's detection and parsing run on the body that is
// left). A line is   PREFIX* BODY   where each PREFIX, tried at the start in this order and
// followed by optional spaces, is one of:
//
//   indentation   spaces and tabs
//   quote         ">" (a log pasted as a quote; ">>" nests)
//   timestamp     "2024-03-30 20:02:40[,.]fff", ISO 8601 "2024-03-30T20:02:40.5+02:00",
//                 "2024/03/30 20:02:40", "03/30/2024 20:02:40", glog "I0330 20:02:40.123456
//                 1234 file.py:12]"; each may be in brackets "[...]" and be followed by a
//                 separator " - " or ": "; LLaMA-Factory's "[INFO|2024-11-26 22:09:01]
//                 logging.py:157 >> " (a level, '|', the time, the source before ">> ")
//   rank tag      "[rank3]:", "[Rank 3]", "rank=3", "rank 3:", torchrun --tee "[default3]:"
//                 (any "[<role><N>]:"), srun --label "3: ", mpirun --tag-output
//                 "[1,3]<stdout>:", Slurm node:task "[0434:3]:", torchtune's "[trainer0|3]:"
//   launcher      "stdout: ", "stderr: ", Ray's "(TaskRunner pid=123)" / "(pid=123, ip=...)"
//   host          "worker-0: ", "node017: " (letters with a digit or '-', then ": "), pdsh's
//                 IPv4 "10.0.0.7: "
//
// A local-rank tag ("[default3]:", any "[<role><N>]:" but "[rankN]") inside a node's label (an
// outer rank tag: srun's "1: [default3]:") is that node's local rank: the line's rank is then
// node * kNodeRankStride + local, which ingestion renumbers to node * (local ranks per node) +
// local once all lines are seen. (A host name before a local-rank tag is not a node number yet.)
// When several timestamps are peeled, the outermost dated one is kept (a year-less glog time
// gives way to a dated one). Peeling stops at the first token that is none of these, and at most
// kMaxPrefixes are peeled. Before peeling, ANSI escape sequences and a byte-order mark are removed.
// A line whose body is empty but that carried a timestamp (W&B's exported logs put the time on its
// own line) lends that timestamp to the next line that has none.
// The \r-separated segments of one physical line share the prefixes of its first segment.
// A bracketed rank tag repeated at the end of the body (a launcher tagging the write that
// follows a tqdm redraw) is dropped from the body.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace mfu::detail {

inline constexpr int kMaxPrefixes = 8;
/// Ranks from a node label and a local-rank tag: node * kNodeRankStride + local.
inline constexpr std::int32_t kNodeRankStride = 1 << 16;
/// Bytes readable after every body, as after every line of LineReader (simdjson needs 64).
inline constexpr std::size_t kBodyPadding = 64;

/// What the peeled prefixes said.
struct LineAttrs {
  /// Unix seconds (UTC); NaN when none; year-less glog times are below 4e7.
  double timestamp_s = std::numeric_limits<double>::quiet_NaN();
  std::int32_t rank = -1;     ///< the innermost rank tag (with its node, above); -1 when none
  std::int32_t node = -1;     ///< an outer rank tag around a local-rank tag; -1 when none
  bool local_rank = false;    ///< `rank` came from a local-rank tag ("[default3]:")
  std::string_view host;      ///< a host or launcher prefix ("worker-0"), empty when none
  std::uint8_t prefixes = 0;  ///< how many prefixes were peeled
};

struct PeeledLine {
  std::string_view body;
  LineAttrs attrs;
};

/// Peels the prefixes of one line that is already free of ANSI codes (views into `line`).
[[nodiscard]] PeeledLine peel_prefixes(std::string_view line);

/// Cleans (ANSI codes, BOM) and peels the lines of one input, in order, carrying a
/// timestamp that stood on a line of its own to the next line. The parsers of peeled formats
/// rely on it: they see no escape sequence (and no longer search each line for one again).
class LinePeeler {
 public:
  /// The body is valid until the next call (it may point into the peeler's own buffer).
  /// `number` is the physical line's: the \r segments of one line (tqdm redrawing) share the
  /// prefixes that stood before its first segment. `may_have_escape` false: the caller knows
  /// the line holds no escape byte (LineReader::may_have_escape), and it is not searched.
  PeeledLine peel(std::string_view raw, std::uint64_t number = 0, bool may_have_escape = true);

 private:
  std::string scratch_;
  std::uint64_t last_number_ = 0;
  LineAttrs line_attrs_;  // of the first segment of line last_number_
  double carried_timestamp_s_ = std::numeric_limits<double>::quiet_NaN();
};

/// The bodies of the lines of `text`, peeled as LinePeeler does, joined by '\n' (for format
/// detection on the start of an input). A text with nothing to peel comes back as it was.
[[nodiscard]] std::string peel_text(std::string_view text);

}  // namespace mfu::detail
