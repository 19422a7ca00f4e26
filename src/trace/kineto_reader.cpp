#include "trace/kineto_reader.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <unordered_map>

#include "mfu/error.hpp"
#include "text.hpp"
#include "trace/event_fields.hpp"

namespace mfu::detail {
namespace {

constexpr std::size_t kChunk = std::size_t{4} << 20;
constexpr std::size_t kMaxValue = std::size_t{256} << 20;  // one metadata value or event

/// The bytes that end a run of a JSON value's other bytes outside strings.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"{}[], \t\n\r\f\v")) t[c] = true;
  return t;
}();

/// A refillable window over the byte stream with JSON-aware skipping.
class Scanner {
 public:
  explicit Scanner(ByteSource& src) : src_(src) {}

  bool eof() { return pos_ >= buf_.size() && !fill(); }
  int peek() {
    if (pos_ >= buf_.size() && !fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  void advance() { ++pos_; }
  void skip_ws() {
    for (;;) {
      while (pos_ < buf_.size() && is_space(buf_[pos_])) ++pos_;
      if (pos_ < buf_.size() || !fill()) return;
    }
  }
  /// Drops consumed bytes so the buffer holds only what is still needed.
  void compact() {
    if (pos_ > (kChunk >> 1)) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
  }
  /// Scans one complete JSON value at the cursor; returns false at a cut-off end.
  bool scan_value(std::size_t& begin, std::size_t& end) {
    compact();
    begin = pos_;
    std::size_t i = pos_;
    int depth = 0;
    bool in_string = false;
    for (;;) {
      if (i >= buf_.size()) {
        if (i - begin > kMaxValue)
          throw Error(
              fmt::format("a JSON value of the trace is larger than {} MiB", kMaxValue >> 20));
        if (!fill()) return false;
        continue;
      }
      if (in_string) {
        // To the next quote or backslash.
        i += quote_or_backslash(buf_.data() + i, buf_.size() - i);
        if (i >= buf_.size()) continue;
        if (buf_[i] == '\\') {
          i += 2;
          continue;
        }
        ++i;
        in_string = false;
        if (depth == 0) {
          end = i;
          pos_ = i;
          return true;
        }
        continue;
      }
      // Outside strings only quotes, brackets, commas and spaces matter.
      while (i < buf_.size() && !kStructural[static_cast<unsigned char>(buf_[i])]) ++i;
      if (i >= buf_.size()) continue;
      const char c = buf_[i];
      switch (c) {
        case '"':
          in_string = true;
          ++i;
          break;
        case '{':
        case '[':
          ++depth;
          ++i;
          break;
        case '}':
        case ']':
          if (depth == 0) {  // the end of the enclosing object ends a scalar value
            end = i;
            pos_ = i;
            return i > begin;
          }
          --depth;
          ++i;
          if (depth == 0) {
            end = i;
            pos_ = i;
            return true;
          }
          break;
        case ',':
          if (depth == 0) {
            end = i;
            pos_ = i;
            return true;
          }
          ++i;
          break;
        default:
          if (depth == 0 && (is_space(c))) {
            end = i;
            pos_ = i;
            return i > begin;
          }
          ++i;
      }
    }
  }
  /// The event object at the cursor, when all of it is in the buffer: its fields are read in the
  /// pass that finds its end (a scan for the end and then one for the fields were 23% and 35%
  /// of reading a trace, perf). False when it runs past the buffer: the caller then scans it as
  /// any value, which reads on as far as it goes.
  bool take_event(std::string_view& ev, EventFields& f) {
    compact();
    const std::string_view rest(buf_.data() + pos_, buf_.size() - pos_);
    const std::size_t length = read_event(rest, f);
    if (length == 0) return false;
    ev = rest.substr(0, length);
    pos_ += length;
    return true;
  }
  /// Reads a string token at the cursor (without unescaping; keys have no escapes).
  bool read_string(std::string& out) {
    std::size_t b, e;
    if (peek() != '"' || !scan_value(b, e)) return false;
    out.assign(buf_.data() + b + 1, e - b - 2);
    return true;
  }
  [[nodiscard]] std::string_view view(std::size_t b, std::size_t e) const {
    return {buf_.data() + b, e - b};
  }

 private:
  bool fill() {
    const std::size_t old = buf_.size();
    buf_.resize(old + kChunk);
    const std::size_t got = src_.read(buf_.data() + old, kChunk);
    buf_.resize(old + got);
    return got > 0;
  }
  ByteSource& src_;
  std::string buf_;
  std::size_t pos_ = 0;
};

/// "4458676983543.183" microseconds -> nanoseconds, exactly (three decimals are nanoseconds).
std::optional<std::int64_t> micros_to_ns(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = false;
  std::size_t i = 0;
  if (s[0] == '-') {
    neg = true;
    ++i;
  }
  std::int64_t whole = 0;
  std::size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (++digits > 16) return std::nullopt;
    whole = whole * 10 + (s[i] - '0');
    ++i;
  }
  if (digits == 0) return std::nullopt;
  // Beyond 9e15 microseconds (285 years from the epoch) the nanoseconds would not fit an int64.
  if (whole > 9'000'000'000'000'000) return std::nullopt;
  std::int64_t frac = 0;
  int fd = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (fd < 3) {
        frac = frac * 10 + (s[i] - '0');
        ++fd;
      }
      ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    auto d = parse_double(s);
    if (!d || !(std::fabs(*d) < 9e15)) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(*d * 1000.0));
  }
  while (fd < 3) {
    frac *= 10;
    ++fd;
  }
  const std::int64_t ns = whole * 1000 + frac;
  return neg ? -ns : ns;
}

/// An integer field's raw text as a number.
std::optional<std::int64_t> raw_int(std::string_view v) {
  if (v.empty()) return std::nullopt;
  std::int64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc()) {
    // Some writers print integers as floats ("dur": 68.0).
    auto d = parse_double(v);
    if (!d || !(std::fabs(*d) < 9e18)) return std::nullopt;  // int64 ends at 9.22e18
    return static_cast<std::int64_t>(*d);
  }
  (void)p;
  return out;
}

double dtype_bytes(std::string_view d) {
  const std::string t = to_lower(d);
  if (t == "float" || t == "float32" || t == "int" || t == "int32") return 4;
  if (t == "bfloat16" || t == "half" || t == "float16" || t == "bf16" || t == "fp16") return 2;
  if (t == "double" || t == "float64" || t == "long" || t == "int64") return 8;
  if (t == "byte" || t == "char" || t == "int8" || t == "uint8" || t == "float8_e4m3fn" ||
      t == "float8_e5m2")
    return 1;
  return 0;
}

/// Transparent hashing: a kernel name is looked up as a view into the trace's text.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Reader {
 public:
  Reader(RawTrace& out, const KernelPatterns& patterns) : out_(out), patterns_(patterns) {}

  void event(std::string_view ev) { event(ev, read_event_fields(ev)); }
  /// `f` is read_event_fields(ev).
  void event(std::string_view ev, const EventFields& f) {
    if (f.ph != "X") return;
    const std::string_view cat = f.cat;
    if (cat.empty()) {
      // The legacy profiler (PyTorch without Kineto, e.g. Debian's 1.13): no "cat"; CPU
      // operators under "pid": "CPU functions", ProfilerStep#N among them.
      if (starts_with(f.name, "ProfilerStep#"))
        annotation(f);
      else
        cpu_op(ev, f);
      return;
    }
    switch (cat.front()) {
      case 'k':
      case 'K':
        if (cat == "kernel" || cat == "Kernel") gpu(ev, f);
        return;
      case 'g':
        if (cat == "gpu_memcpy" || cat == "gpu_memset") gpu(ev, f);
        return;
      case 'M':
        if (cat == "Memcpy" || cat == "Memset") gpu(ev, f);
        return;
      case 'c':
        if (cat == "cuda_runtime" || cat == "cuda_driver")
          runtime(f);
        else if (cat == "cpu_op")
          cpu_op(ev, f);
        else if (cat == "cuda_sync")
          ++out_.sync_events;
        return;
      case 'R':
        if (cat == "Runtime") runtime(f);
        return;
      case 'O':
        // The early-2021 schema (PyTorch 1.8): CPU operators, ProfilerStep#N among them.
        if (cat == "Operator") {
          if (starts_with(f.name, "ProfilerStep#"))
            annotation(f);
          else
            cpu_op(ev, f);
        }
        return;
      case 'u':
        if (cat == "user_annotation") annotation(f);
        return;
      default: return;
    }
  }

  void finish() {
    // Keep the device that ran the most work.
    std::size_t best = 0;
    for (auto& [dev, events] : per_device_) {
      if (events.size() > best) {
        best = events.size();
        out_.device = dev;
      }
    }
    if (out_.device >= 0) out_.gpu = std::move(per_device_[out_.device]);
    if (per_device_.size() > 1)
      out_.warnings.push_back(
          fmt::format("the trace has GPU events on {} devices; device {} (the busiest) is analyzed",
                      per_device_.size(), out_.device));
    std::sort(out_.gpu.begin(), out_.gpu.end(),
              [](const GpuEvent& a, const GpuEvent& b) { return a.start < b.start; });
    std::sort(out_.launches.begin(), out_.launches.end());
    std::sort(out_.steps.begin(), out_.steps.end(),
              [](const CpuSpan& a, const CpuSpan& b) { return a.start < b.start; });
    std::sort(out_.data_spans.begin(), out_.data_spans.end(),
              [](const CpuSpan& a, const CpuSpan& b) { return a.start < b.start; });
    std::sort(out_.flops.begin(), out_.flops.end(),
              [](const FlopCount& a, const FlopCount& b) { return a.ts < b.ts; });
  }

 private:
  void gpu(std::string_view ev, const EventFields& f) {
    const auto ts = micros_to_ns(f.ts);
    const auto dur = micros_to_ns(f.dur);
    const auto pid = raw_int(f.pid);
    if (!ts || !dur || !pid) {
      ++bad_;
      return;
    }
    const std::string_view name = f.name;
    const KernelKind kind = classify(name, f.cat);
    if (kind == KernelKind::kSync) {
      ++out_.sync_events;
      return;
    }
    if (*dur < 0) {
      ++bad_;
      return;
    }
    GpuEvent g;
    g.start = *ts;
    g.end = *ts + *dur;
    g.kind = kind;
    g.correlation = raw_int(f.correlation).value_or(-1);
    g.stream = static_cast<std::int32_t>(raw_int(f.tid).value_or(0));
    if (kind == KernelKind::kMemory)
      ++out_.memory_events;
    else
      ++out_.kernels;
    if (kind == KernelKind::kComm) g.collective = collective(ev, name, g);
    per_device_[static_cast<int>(*pid)].push_back(g);
  }

  /// patterns_.classify, remembered by kernel name: a trace launches the same few hundred
  /// kernels over and over, and matching a name against every pattern took a tenth of the
  /// time to read a trace. The category decides alone for copies, sets and syncs.
  KernelKind classify(std::string_view name, std::string_view cat) {
    const bool by_name = cat == "kernel" || cat == "Kernel";
    if (!by_name) return patterns_.classify(name, cat);
    if (auto it = kinds_.find(name); it != kinds_.end()) return it->second;
    const KernelKind kind = patterns_.classify(name, cat);
    // Bounded: a trace of millions of distinct names (generated ones) stops remembering.
    if (kinds_.size() < kMaxRemembered) kinds_.emplace(std::string(name), kind);
    return kind;
  }

  /// Collective metadata from the kernel's arguments (PyTorch >= 2.1 puts record_param_comms'
  /// arguments there): process group, collective name, sequence number, message size.
  std::int32_t collective(std::string_view ev, std::string_view name, const GpuEvent& g) {
    CollectiveCall c;
    c.start_ns = g.start;
    c.dur_ns = g.end - g.start;
    std::string pg = "?", coll, seq;
    double nelems = 0, bytes_per = 0;
    if (ev.find("Collective name") != std::string_view::npos ||
        ev.find("Process Group") != std::string_view::npos) {
      simdjson::padded_string padded(ev);
      simdjson::dom::element doc;
      if (!parser_.parse(padded).get(doc)) {
        simdjson::dom::element args;
        if (!doc["args"].get(args)) {
          std::string_view sv;
          if (!args["Process Group Name"].get(sv)) pg = std::string(sv);
          if (!args["Collective name"].get(sv)) coll = std::string(sv);
          if (!args["dtype"].get(sv)) bytes_per = dtype_bytes(sv);
          int64_t n = 0;
          if (!args["In msg nelems"].get(n)) nelems = static_cast<double>(n);
          int64_t s = 0;
          if (!args["Seq"].get(s) || !args["seq"].get(s)) seq = std::to_string(s);
        }
      }
    }
    if (coll.empty()) {
      // From the kernel name: ncclKernel_AllReduce_..., ncclDevKernel_AllGather_...
      const std::size_t u = name.find('_');
      coll = std::string(name.substr(u == std::string_view::npos ? 0 : u + 1, 24));
      const std::size_t u2 = coll.find('_');
      if (u2 != std::string::npos) coll.resize(u2);
    }
    const std::string base = pg + "/" + coll;
    if (seq.empty()) seq = "#" + std::to_string(occurrences_[base]++);
    c.key = base + "/" + seq;
    c.bytes = nelems * bytes_per;
    out_.collectives.push_back(std::move(c));
    return static_cast<std::int32_t>(out_.collectives.size() - 1);
  }

  void runtime(const EventFields& f) {
    const std::string_view name = f.name;
    // Only calls that put work on the GPU: kernel launches, async copies and sets.
    if (name.find("aunch") == std::string_view::npos &&
        name.find("Memcpy") == std::string_view::npos &&
        name.find("Memset") == std::string_view::npos)
      return;
    const auto ts = micros_to_ns(f.ts);
    const auto corr = raw_int(f.correlation);
    if (ts && corr) out_.launches.emplace_back(*corr, *ts);
  }

  void annotation(const EventFields& f) {
    const std::string_view name = f.name;
    if (!starts_with(name, "ProfilerStep#")) return;
    const auto ts = micros_to_ns(f.ts);
    const auto dur = micros_to_ns(f.dur);
    auto n = parse_int(name.substr(13));
    if (!ts || !dur || !n) return;
    out_.steps.push_back(CpuSpan{*ts, *ts + *dur, *n});
  }

  void cpu_op(std::string_view ev, const EventFields& fields) {
    const std::string_view name = fields.name;
    if (name.find("DataLoader") != std::string_view::npos) {
      const auto ts = micros_to_ns(fields.ts);
      const auto dur = micros_to_ns(fields.dur);
      if (ts && dur) out_.data_spans.push_back(CpuSpan{*ts, *ts + *dur, -1});
    }
    // with_flops=True: operators carry "flops" in their arguments.
    if (fields.flops.data() != nullptr) {  // the key is there (its value is read below)
      simdjson::padded_string padded(ev);
      simdjson::dom::element doc;
      if (parser_.parse(padded).get(doc)) return;
      double f = 0;
      simdjson::dom::element v;
      if (doc["args"]["flops"].get(v)) return;
      if (v.is_int64())
        f = static_cast<double>(v.get_int64().value_unsafe());
      else if (v.is_uint64())
        f = static_cast<double>(v.get_uint64().value_unsafe());
      else if (v.is_double())
        f = v.get_double().value_unsafe();
      const auto ts = micros_to_ns(fields.ts);
      if (ts && f > 0) out_.flops.push_back(FlopCount{*ts, f});
    }
  }

  RawTrace& out_;
  const KernelPatterns& patterns_;
  simdjson::dom::parser parser_;
  std::map<int, std::vector<GpuEvent>> per_device_;
  std::map<std::string, std::int64_t> occurrences_;
  // A judgement: real traces launch hundreds of distinct kernels; 65,536 names of ~100 bytes
  // bound the memory at a few MB.
  static constexpr std::size_t kMaxRemembered = 1 << 16;
  std::unordered_map<std::string, KernelKind, NameHash, std::equal_to<>> kinds_;

 public:
  std::size_t bad_ = 0;
};

void metadata(std::string_view key, std::string_view value, RawTrace& out) {
  if (key != "deviceProperties" && key != "distributedInfo" && key != "baseTimeNanoseconds") return;
  simdjson::dom::parser p;
  simdjson::padded_string padded(value);
  simdjson::dom::element e;
  if (p.parse(padded).get(e)) {
    out.warnings.push_back(fmt::format("'{}' does not parse as JSON; ignored", key));
    return;
  }
  if (key == "baseTimeNanoseconds") {
    std::int64_t b = 0;
    std::uint64_t u = 0;
    if (!e.get(b))
      out.base_ns = b;
    else if (!e.get(u))
      out.base_ns = static_cast<std::int64_t>(u);
    return;
  }
  if (key == "distributedInfo") {
    std::int64_t v = 0;
    constexpr std::int64_t kMaxRanks = 1 << 24;  // beyond any real job: larger values are garbage
    if (!e["rank"].get(v) && v >= 0 && v < kMaxRanks) {
      out.rank = static_cast<int>(v);
      out.rank_source = "distributedInfo";
    }
    if (!e["world_size"].get(v) && v > 0 && v <= kMaxRanks) out.world_size = static_cast<int>(v);
    return;
  }
  simdjson::dom::array devices;
  if (e.get(devices)) return;
  for (auto d : devices) {
    std::int64_t id = 0;
    std::string_view name;
    if (d["id"].get(id) || d["name"].get(name)) continue;
    if (id < 0 || id > 4096) continue;
    if (out.device_names.size() <= static_cast<std::size_t>(id))
      out.device_names.resize(static_cast<std::size_t>(id) + 1);
    out.device_names[static_cast<std::size_t>(id)] = std::string(name);
  }
}

}  // namespace

RawTrace read_kineto(ByteSource& source, const std::string& name, const KernelPatterns& patterns) {
  RawTrace out;
  out.file = name;
  Scanner s(source);
  Reader reader(out, patterns);
  s.skip_ws();
  bool bare_array = false;
  if (s.peek() == '[') {
    bare_array = true;  // the Chrome "JSON array" form: just the events
  } else if (s.peek() != '{') {
    throw Error(fmt::format("'{}' is not a profiler trace: it does not start with '{{'", name),
                "mfu reads PyTorch profiler (Kineto) Chrome-trace JSON");
  } else {
    s.advance();
  }
  auto read_events = [&]() {
    s.advance();  // '['
    for (;;) {
      s.skip_ws();
      const int c = s.peek();
      if (c < 0) {
        out.truncated = true;
        return false;
      }
      if (c == ']') {
        s.advance();
        return true;
      }
      if (c == ',') {
        s.advance();
        continue;
      }
      std::string_view whole;
      EventFields fields;
      if (c == '{' && s.take_event(whole, fields)) {
        reader.event(whole, fields);
        continue;
      }
      std::size_t b, e;
      if (!s.scan_value(b, e)) {
        out.truncated = true;
        return false;
      }
      if (c == '{') reader.event(s.view(b, e));
    }
  };
  bool saw_events = false;
  if (bare_array) {
    saw_events = true;
    read_events();
  } else {
    for (;;) {
      s.skip_ws();
      const int c = s.peek();
      if (c < 0) {
        out.truncated = true;
        break;
      }
      if (c == '}') break;
      if (c == ',') {
        s.advance();
        continue;
      }
      std::string key;
      if (!s.read_string(key)) {
        out.truncated = true;
        break;
      }
      s.skip_ws();
      if (s.peek() != ':') {
        out.warnings.push_back(fmt::format("malformed trace near key '{}'", key));
        break;
      }
      s.advance();
      s.skip_ws();
      if (key == "traceEvents" && s.peek() == '[') {
        saw_events = true;
        if (!read_events()) break;
        continue;
      }
      std::size_t b, e;
      if (!s.scan_value(b, e)) {
        out.truncated = true;
        break;
      }
      metadata(key, s.view(b, e), out);
    }
  }
  if (!saw_events)
    throw Error(fmt::format("'{}' has no traceEvents array", name),
                "is this a PyTorch profiler trace?");
  reader.finish();
  if (out.truncated)
    out.warnings.push_back(
        "the trace ends before its end (a crashed writer or a cut file): what was read is "
        "analyzed");
  if (reader.bad_ > 0)
    out.warnings.push_back(
        fmt::format("{} GPU events without a valid ts, dur or pid were skipped", reader.bad_));
  if (out.rank < 0) {
    // "rank3", "rank-3", "rank_3" in the file name (any case).
    const std::string base = to_lower(
        name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1));
    for (std::size_t p = base.find("rank"); p != std::string::npos; p = base.find("rank", p + 4)) {
      std::size_t i = p + 4;
      if (i < base.size() && (base[i] == '-' || base[i] == '_')) ++i;
      std::size_t digits = 0;
      int rank = 0;
      while (i < base.size() && base[i] >= '0' && base[i] <= '9' && digits < 9) {
        rank = rank * 10 + (base[i] - '0');
        ++i;
        ++digits;
      }
      if (digits > 0) {
        out.rank = rank;
        out.rank_source = "file name";
        break;
      }
    }
  }
  return out;
}

}  // namespace mfu::detail
