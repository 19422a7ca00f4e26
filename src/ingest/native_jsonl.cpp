// mfu's native JSON Lines, for users who add one line to their training loop (DESIGN.md):
//   {"type":"meta","gpu":"h100-sxm","gpus":16,"dtype":"bf16","model":"llama3-8b","seq_len":8192}
//   {"step":1,"time_s":0.330,"model_flops":3.5e13,"tokens":131072,"phases":{"comm_s":0.080}}
//   {"type":"event","kind":"checkpoint","step":500,"duration_s":42.0}
// Units are in the key suffix (_s, _ms, _us); unknown keys are kept out of the way. Sampling:
// a record is one iteration unless it says how many it averages ("iterations"); a step counter
// that jumps means records that are missing, not averaged ones.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ingest/native_fields.hpp"
#include "ingest/parser.hpp"
#include "io/line_reader.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

// The DOM API dispatches to the best SIMD kernel at run time (On-Demand would be fixed at
// compile time to the generic kernel on a portable build).
using simdjson::dom::element_type;

/// Reads a JSON value as a double: numbers, numeric strings ("0.33"), null -> NaN.
double as_number(simdjson::dom::element v) {
  switch (v.type()) {
    case element_type::DOUBLE: return v.get_double().value_unsafe();
    case element_type::INT64: return static_cast<double>(v.get_int64().value_unsafe());
    case element_type::UINT64: return static_cast<double>(v.get_uint64().value_unsafe());
    case element_type::BOOL: return v.get_bool().value_unsafe() ? 1.0 : 0.0;
    case element_type::STRING: {
      auto d = parse_double(v.get_string().value_unsafe());
      return d ? *d : kUnknown;
    }
    default: return kUnknown;
  }
}

std::string as_text(simdjson::dom::element v) {
  switch (v.type()) {
    case element_type::STRING: return std::string(v.get_string().value_unsafe());
    case element_type::BOOL: return v.get_bool().value_unsafe() ? "true" : "false";
    case element_type::DOUBLE:
    case element_type::INT64:
    case element_type::UINT64: return fmt::format("{}", as_number(v));
    default: return {};
  }
}

bool is_text_key(std::string_view key) {
  return key == "type" || key == "kind" || key == "gpu" || key == "model" || key == "dtype" ||
         key == "recompute" || key == "convention" || key == "detail" || key == "name" ||
         key == "framework" || key == "tokens_scope";
}

/// The keys of the previous line in order, each resolved once: a log writes the same keys in
/// the same order on every step line, so the text at the k-th key is compared with the k-th key
/// of the line before, closing quote included (one memcmp), instead of being scanned for its
/// end and resolved again (a chain of compares and the unit suffix).
class KeyMemo {
 public:
  /// `read_loss` false: a plain number under "loss" is not read (IngestOptions::keep_loss).
  explicit KeyMemo(bool read_loss) : read_loss_(read_loss) {}

  struct Slot {
    std::string key;  // as written: no quote or backslash (the scanner's strings have none)
    bool phases = false;
    NativeKey resolved;  // what a number under this key sets
    /// A plain number under this key on a step line is checked, not read: a key that is no
    /// field ("lr", read only if the line is a meta line) or a loss the builder would drop.
    bool unread = false;
    /// The key and its closing quote, zero-padded to 16 bytes, when they fit: compared with the
    /// text in one 16-byte compare instead of a memcmp call (BM_NativeLines about 3% faster).
    std::array<char, 16> quoted{};
    bool short_key = false;
  };

  /// The slot of the key at `position` when the text at `p` (past the opening quote) spells
  /// the same key followed by its closing quote, in the same object; else null.
  Slot* predict(std::size_t position, const char* p, const char* end, bool phases) {
    if (position >= slots_.size()) return nullptr;
    Slot& s = slots_[position];
    if (s.phases != phases) return nullptr;
    const std::size_t n = s.key.size(), left = static_cast<std::size_t>(end - p);
    if (s.short_key && left >= 16) return same_16(p, s) ? &s : nullptr;
    if (left <= n || p[n] != '"' || std::memcmp(p, s.key.data(), n) != 0) return nullptr;
    return &s;
  }
  /// Remembers and resolves the key read at `position` (only when the layout changes). The
  /// slot stays valid until the next call.
  Slot& remember(std::size_t position, std::string_view key, bool phases) {
    if (position >= slots_.size()) slots_.resize(position + 1);
    Slot& s = slots_[position];
    s.key.assign(key);
    s.phases = phases;
    s.resolved = phases ? resolve_phase_key(key) : resolve_number_key(key);
    using T = NativeKey::Target;
    s.unread = !phases &&
               (s.resolved.target == T::kOther || (s.resolved.target == T::kLoss && !read_loss_));
    s.short_key = key.size() < s.quoted.size();
    s.quoted.fill('\0');
    if (s.short_key) {
      std::copy(key.begin(), key.end(), s.quoted.begin());
      s.quoted[key.size()] = '"';
    }
    return s;
  }

 private:
  /// Whether the 16 bytes at p start with s's key and closing quote (the rest not compared).
  static bool same_16(const char* p, const Slot& s) {
    const std::size_t n = s.key.size() + 1;  // with the quote
#if defined(__SSE2__)
    const __m128i text = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i want = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.quoted.data()));
    const auto equal = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(text, want)));
    const unsigned mask = (1u << n) - 1;
    return (equal & mask) == mask;
#else
    return std::memcmp(p, s.quoted.data(), n) == 0;
#endif
  }

  std::vector<Slot> slots_;
  bool read_loss_;
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// The end of the JSON number at p (RFC 8259 section 6) when it is a plain one, which
/// fast_from_chars reads whole and to a finite double: at most 19 digits and an exponent of
/// at most two digits (below 10^119 in magnitude: no overflow, no underflow to zero); null for
/// anything else (the caller parses it), also when a number character follows ("0123", "1.5.2":
/// what the parse does with those stays its own).
const char* plain_number_end(const char* p, const char* end) {
  const char* const first = p;
  if (p < end && *p == '-') ++p;
  const char* const digits_from = p;
  if (p < end && *p == '0') {
    ++p;
  } else {
    while (p < end && is_digit(*p)) ++p;
    if (p == digits_from) return nullptr;
  }
  std::ptrdiff_t digits = p - digits_from;
  if (p < end && *p == '.') {
    const char* const frac = ++p;
    while (p < end && is_digit(*p)) ++p;
    if (p == frac) return nullptr;
    digits += p - frac;
  }
  if (digits > 19) return nullptr;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    const char* const exp = p;
    while (p < end && is_digit(*p)) ++p;
    if (p == exp || p - exp > 2) return nullptr;
  }
  if (p < end && (is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'))
    return nullptr;
  return p == first ? nullptr : p;
}

/// The fast path for the common line: one flat object of numbers and plain strings, with at
/// most one nested "phases"/"timers" object. Reads numbers with from_chars and builds no DOM.
/// Returns false for anything else (escapes, arrays, other nesting, bad syntax): the caller
/// then discards `rec` and uses simdjson, which gives the same result on what both accept.
class FlatScanner {
 public:
  FlatScanner(std::string_view t, KeyMemo& memo)
      : p_(t.data()), end_(t.data() + t.size()), memo_(memo) {}

  bool scan(NativeRecord& rec) {
    if (!object(rec, false)) return false;
    ws();
    return p_ == end_;
  }

 private:
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n')) ++p_;
  }
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }
  /// A string without escapes. The closing quote and a backslash are looked for at once, inline
  /// (two memchr calls were 7% of the native read in a profile, mostly call overhead on keys of
  /// a few bytes).
  bool string(std::string_view& out) {
    ++p_;  // past the opening quote
    const char* q = p_ + quote_or_backslash(p_, static_cast<std::size_t>(end_ - p_));
    if (q == end_ || *q != '"') return false;  // cut off, or an escape: the simdjson path
    out = std::string_view(p_, static_cast<std::size_t>(q - p_));
    p_ = q + 1;
    return true;
  }
  bool object(NativeRecord& rec, bool phases) {
    if (p_ >= end_ || *p_ != '{') return false;
    ++p_;
    ws();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    while (true) {
      ws();
      std::string_view key;
      KeyMemo::Slot* slot = this->key(key, phases);
      if (slot == nullptr) return false;
      ws();
      if (p_ >= end_ || *p_ != ':') return false;
      ++p_;
      ws();
      if (!value(rec, key, *slot, phases)) return false;
      ws();
      if (p_ >= end_) return false;
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != '}') return false;
      ++p_;
      return true;
    }
  }
  /// Reads the next key (a view into the line) and returns its memo slot; null when it is not
  /// a plain string.
  KeyMemo::Slot* key(std::string_view& out, bool phases) {
    if (p_ >= end_ || *p_ != '"') return nullptr;
    const std::size_t position = keys_++;
    if (KeyMemo::Slot* s = memo_.predict(position, p_ + 1, end_, phases)) {
      out = std::string_view(p_ + 1, s->key.size());
      p_ += s->key.size() + 2;
      return s;
    }
    if (!string(out)) return nullptr;
    return &memo_.remember(position, out, phases);
  }
  static void put(NativeRecord& rec, std::string_view key, const KeyMemo::Slot& slot, double v,
                  bool phases) {
    const NativeKey& k = slot.resolved;
    if (phases)
      rec.phase(k, v);
    else
      rec.number(k, key, v);
  }
  bool value(NativeRecord& rec, std::string_view key, const KeyMemo::Slot& slot, bool phases) {
    if (p_ >= end_) return false;
    const char c = *p_;
    if (c == '"') {
      std::string_view sv;
      if (!string(sv)) return false;
      if (!phases && is_text_key(key)) {
        rec.text(key, std::string(sv));
      } else {
        const auto d = parse_double(sv);
        put(rec, key, slot, d ? *d : kUnknown, phases);
      }
      return true;
    }
    if (c == '{') return !phases && (key == "phases" || key == "timers") && object(rec, true);
    if (c == 't') return literal("true") && (put(rec, key, slot, 1.0, phases), true);
    if (c == 'f') return literal("false") && (put(rec, key, slot, 0.0, phases), true);
    if (c == 'n') return literal("null") && (put(rec, key, slot, kUnknown, phases), true);
    // Python's json.dumps writes NaN and Infinity; they read as unknown, as on the slow path.
    if (c == 'N') return literal("NaN") && (put(rec, key, slot, kUnknown, phases), true);
    if (c == 'I') return literal("Infinity") && (put(rec, key, slot, kUnknown, phases), true);
    if (c == '-' && p_ + 1 < end_ && p_[1] == 'I')
      return literal("-Infinity") && (put(rec, key, slot, kUnknown, phases), true);
    if (c != '-' && (c < '0' || c > '9')) return false;
    if (slot.unread) {
      if (const char* q = plain_number_end(p_, end_)) {
        // "lr", "grad_norm" and the like: read only if the line turns out to be a meta line. A
        // loss: a plain number is finite, so the record had one (left out).
        if (slot.resolved.target == NativeKey::Target::kOther)
          rec.other_number_text(key, std::string_view(p_, static_cast<std::size_t>(q - p_)));
        else
          rec.loss_unread();
        p_ = q;
        return true;
      }
    }
    double v = 0;
    const char* q = fast_from_chars(p_, end_, v);
    if (q == nullptr) return false;
    p_ = q;
    put(rec, key, slot, v, phases);
    return true;
  }

  const char* p_;
  const char* end_;
  KeyMemo& memo_;
  std::size_t keys_ = 0;  // keys read so far on this line, nested ones too (the memo's position)
};

class NativeJsonlParser : public LineParser {
 public:
  explicit NativeJsonlParser(RunBuilder& out) : out_(out) {}

  void line(std::string_view text, std::uint64_t number) override {
    std::string_view t = trim(text);
    if (t.empty() || t.front() == '#') return;
    if (t.front() != '{') {
      out_.malformed(number, "not a JSON object; native lines start with '{'");
      return;
    }
    rec_.reset();
    if (FlatScanner(t, memo_).scan(rec_)) {
      rec_.emit(out_, number);
      return;
    }
    // The reader guarantees kLinePadding readable bytes after each line (simdjson's padding).
    if (!parse(t.data(), t.size(), number)) {
      // Python's json.dumps writes NaN and Infinity, which JSON does not allow: retry with null.
      if (contains(t, "NaN") || contains(t, "Infinity")) {
        simdjson::padded_string padded(replace_non_finite(t));
        if (parse(padded.data(), padded.size(), number)) return;
      }
      out_.malformed(number, "not valid JSON (cut off, or not a native mfu line)");
    }
  }

 private:
  static std::string replace_non_finite(std::string_view t) {
    std::string s(t);
    for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
      std::size_t p = 0;
      while ((p = s.find(word, p)) != std::string::npos) {
        s.replace(p, std::strlen(word), "null");
        p += 4;
      }
    }
    return s;
  }

  bool parse(const char* data, std::size_t len, std::uint64_t number) {
    simdjson::dom::element doc;
    if (parser_.parse(data, len, false).get(doc)) return false;
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) return false;
    NativeRecord rec;
    for (auto field : obj) {
      const std::string_view key = field.key;
      const simdjson::dom::element v = field.value;
      if (key == "phases" || key == "timers") {
        simdjson::dom::object ph;
        if (v.get_object().get(ph)) continue;
        for (auto pf : ph) rec.phase(pf.key, as_number(pf.value));
        continue;
      }
      const element_type type = v.type();
      if (type == element_type::OBJECT || type == element_type::ARRAY)
        continue;  // unknown nested keys
      if (type == element_type::STRING && is_text_key(key)) {
        rec.text(key, as_text(v));
      } else {
        rec.number(key, as_number(v));
      }
    }
    rec.emit(out_, number);
    return true;
  }

  RunBuilder& out_;
  simdjson::dom::parser parser_;
  NativeRecord rec_;  // the fast path's record, reused line after line (no allocation per line)
  KeyMemo memo_{out_.options.keep_loss};
};

double sniff_native_jsonl(std::string_view head, std::string_view filename) {
  double score = 0;
  std::size_t pos = 0;
  int lines = 0, objects = 0;
  while (pos < head.size() && lines < 5000) {
    std::size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    std::string_view l = trim(head.substr(pos, nl - pos));
    pos = nl + 1;
    if (l.empty()) continue;
    ++lines;
    if (l.front() != '{') continue;
    ++objects;
    // The meta line is mfu's own signature.
    if (contains(l, "\"type\"") && contains(l, "\"meta\"")) score += 50;
    if (contains(l, "\"step\"") &&
        (contains(l, "\"time_s\"") || contains(l, "\"time_ms\"") || contains(l, "\"model_flops\"")))
      score += 1;
  }
  (void)filename;
  // A native log is JSON Lines: prose with a few JSON examples (a README) is not one.
  if (objects * 2 < lines) return 0;
  return score;
}

/// Every native line stands alone.
bool record_start(std::string_view line) {
  return !line.empty() && line.front() == '{';
}

}  // namespace

const FormatSpec& native_jsonl_format() {
  static const FormatSpec spec{"native",
                               "mfu native JSON Lines (meta, step and event lines)",
                               sniff_native_jsonl,
                               make_line_parser<NativeJsonlParser>,
                               nullptr,
                               nullptr,
                               0,
                               TimingKind::kPerIteration,
                               record_start,
                               true};
  return spec;
}

}  // namespace mfu::detail
