#pragma once
// Hands a line parser the bodies of its lines: each line is cleaned and its prefixes peeled by
// the line layer (io/line_prefix.hpp), the RunBuilder learns the line's attributes (rank,
// timestamp), then the parser sees the body. Every reader of text lines goes through here:
// the streaming reader, the parallel pieces and the follower.

#include <cstdint>
#include <string_view>

#include "ingest/parser.hpp"
#include "io/line_prefix.hpp"
#include "io/line_reader.hpp"

namespace mfu::detail {

class LineFeed {
 public:
  LineFeed(const FormatSpec& spec, LineParser& parser, RunBuilder& out)
      : raw_(spec.raw_lines), parser_(parser), out_(out) {}

  /// `may_have_escape` false: the line certainly holds no escape byte (the reader knows).
  void line(std::string_view raw, std::uint64_t number, bool may_have_escape = true) {
    if (raw_) {
      out_.set_line(number, LineAttrs{});
      parser_.line(raw, number);
      return;
    }
    const PeeledLine p = peeler_.peel(raw, number, may_have_escape);
    out_.set_line(number, p.attrs);
    parser_.line(p.body, number);
  }

  /// Every remaining line of `reader`.
  void all(LineReader& reader) {
    std::string_view l;
    while (reader.next(l)) line(l, reader.line_number(), reader.may_have_escape());
  }

 private:
  bool raw_;
  LinePeeler peeler_;
  LineParser& parser_;
  RunBuilder& out_;
};

/// The body a record-start test should see for `raw` (peeled unless the format reads raw lines).
[[nodiscard]] inline std::string_view record_body(const FormatSpec& spec, std::string_view raw) {
  return spec.raw_lines ? raw : peel_prefixes(raw).body;
}

}  // namespace mfu::detail
