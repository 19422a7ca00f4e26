// Prefix peeling (the grammar is in line_prefix.hpp).
#include "io/line_prefix.hpp"

#include <algorithm>
#include <cmath>

#include "io/timestamp.hpp"

namespace mfu::detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
char lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}
bool istarts(std::string_view s, std::string_view p) {
  if (s.size() < p.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (lower_ascii(s[i]) != p[i]) return false;
  return true;
}

/// Reads decimal digits at `i` (at most 7); -1 when there are none.
std::int32_t read_number(std::string_view s, std::size_t& i) {
  std::int32_t v = 0;
  const std::size_t start = i;
  while (i < s.size() && is_digit(s[i]) && i - start < 7) v = v * 10 + (s[i++] - '0');
  return i == start ? -1 : v;
}

void skip_spaces(std::string_view s, std::size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

/// After a timestamp: " - " or ": " (a logger's separator), else nothing. Not " | ": an
/// nvidia-smi table row would lose its first bar.
void skip_separator(std::string_view s, std::size_t& i) {
  std::size_t j = i;
  skip_spaces(s, j);
  if (j + 1 < s.size() && (s[j] == '-' || s[j] == ':') && s[j + 1] == ' ') i = j + 2;
}

/// A timestamp, bare or in brackets. Returns the characters used, 0 when none.
std::size_t timestamp_token(std::string_view s, double& t) {
  const bool bracket = !s.empty() && s[0] == '[';
  std::size_t len = 0;
  const double v = read_timestamp_prefix(s.substr(bracket ? 1 : 0), len);
  if (std::isnan(v)) return 0;
  std::size_t i = len + (bracket ? 1 : 0);
  if (bracket) {
    if (i >= s.size() || s[i] != ']') return 0;
    ++i;
  }
  skip_separator(s, i);
  t = v;
  return i;
}

/// LLaMA-Factory's logger, "[INFO|2024-11-26 22:09:01] logging.py:157 >> ": a level, '|', a
/// timestamp in brackets, then the source location before ">> ". Returns the characters used.
std::size_t level_bracket_token(std::string_view s, double& t) {
  if (s.size() < 8 || s[0] != '[') return 0;
  std::size_t i = 1;
  while (i < s.size() && i < 10 && s[i] >= 'A' && s[i] <= 'Z') ++i;
  if (i < 5 || i >= s.size() || s[i] != '|') return 0;  // INFO, DEBUG, WARNING, ERROR, ...
  std::size_t len = 0;
  const double v = read_timestamp_prefix(s.substr(i + 1), len);
  i += 1 + len;
  if (std::isnan(v) || i >= s.size() || s[i] != ']') return 0;
  ++i;
  const std::size_t arrow = s.find(" >> ", i);
  if (arrow != std::string_view::npos && arrow - i < 48 &&
      s.substr(i, arrow - i).find_first_of("[]") == std::string_view::npos)
    i = arrow + 4;
  t = v;
  return i;
}

/// "[0434:3]:" (Slurm node:task) or "[trainer0|3]:" (torchtune's job|rank): a name, ':' or
/// '|', the rank, then "]:". Returns the characters used.
std::size_t pair_rank_token(std::string_view s, std::int32_t& rank) {
  std::size_t i = 1;
  while (i < s.size() && i < 40 &&
         (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.'))
    ++i;
  if (i == 1 || i >= s.size() || (s[i] != ':' && s[i] != '|')) return 0;
  ++i;
  const std::int32_t r = read_number(s, i);
  if (r < 0 || i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') return 0;
  rank = r;
  return i + 2;
}

/// "[rank3]:", "[Rank 3]", "[default3]:", "[1,3]<stdout>:", "[0434:3]:", "[trainer0|3]:".
/// Returns the characters used.
std::size_t bracket_rank_token(std::string_view s, std::int32_t& rank, bool& local) {
  if (s.size() < 3 || s[0] != '[') return 0;
  if (const std::size_t n = pair_rank_token(s, rank)) return n;
  std::size_t i = 1;
  if (is_digit(s[i])) {  // mpirun --tag-output: [jobid,rank]<stdout>:
    if (read_number(s, i) < 0 || i >= s.size() || s[i] != ',') return 0;
    ++i;
    const std::int32_t r = read_number(s, i);
    if (r < 0 || i >= s.size() || s[i] != ']') return 0;
    ++i;
    for (std::string_view tag : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
      if (s.substr(i).substr(0, tag.size()) == tag) {
        rank = r;
        return i + tag.size();
      }
    }
    return 0;
  }
  const bool rank_word = istarts(s.substr(1), "rank");
  while (i < s.size() && (is_alpha(s[i]) || s[i] == '_')) ++i;
  if (i == 1 || i - 1 > 24) return 0;
  if (rank_word) skip_spaces(s, i);
  const std::int32_t r = read_number(s, i);
  if (r < 0 || i >= s.size() || s[i] != ']') return 0;
  ++i;
  const bool colon = i < s.size() && s[i] == ':';
  if (!colon && !rank_word) return 0;  // "[step3]" could be a format's own text
  rank = r;
  local = !rank_word;  // torchrun --tee's "[{role}{local_rank}]:"
  return i + (colon ? 1 : 0);
}

/// "rank=3", "rank 3:", srun's "3: ". Returns the characters used.
std::size_t plain_rank_token(std::string_view s, std::int32_t& rank) {
  std::size_t i = 0;
  if (istarts(s, "rank=")) {
    i = 5;
    const std::int32_t r = read_number(s, i);
    if (r < 0 || (i < s.size() && s[i] != ' ' && s[i] != ':' && s[i] != ',' && s[i] != ']'))
      return 0;
    if (i < s.size() && (s[i] == ':' || s[i] == ',')) ++i;
    rank = r;
    return i;
  }
  if (istarts(s, "rank ")) {
    i = 5;
    const std::int32_t r = read_number(s, i);
    if (r < 0 || i >= s.size() || s[i] != ':') return 0;
    rank = r;
    return i + 1;
  }
  const std::int32_t r = read_number(s, i);
  if (r < 0 || i > 6 || i + 1 >= s.size() || s[i] != ':' || s[i + 1] != ' ') return 0;
  rank = r;
  return i + 2;
}

/// "stdout: ", "stderr: ", "(TaskRunner pid=123)", "(pid=123, ip=10.0.0.1)".
std::size_t launcher_token(std::string_view s) {
  for (std::string_view tag : {"stdout: ", "stderr: "})
    if (s.substr(0, tag.size()) == tag) return tag.size();
  if (s.empty() || s[0] != '(') return 0;
  const std::size_t close = s.find(')');
  if (close == std::string_view::npos || close > 96) return 0;
  const std::string_view inside = s.substr(1, close - 1);
  const std::size_t pid = inside.find("pid=");
  if (pid == std::string_view::npos || (pid > 0 && inside[pid - 1] != ' ')) return 0;
  return close + 1;
}

/// A node number for a host name, the same in every piece of a file read in parallel: the
/// numbers in its first label folded together ("worker-3" -> 3, "node017" -> 17,
/// "ip-10-0-0-1.ec2.internal" -> 10, 0, 0, 1 folded), else a hash of the name. Ingestion
/// renumbers the nodes 0..N-1 in this order.
std::int32_t host_node(std::string_view host) {
  constexpr std::uint32_t kNodes = 29989;  // a prime below kNodeRankStride / 2
  host = host.substr(0, host.find('.'));
  while (!host.empty() && (host.back() == ':' || host.back() == ' ')) host.remove_suffix(1);
  std::uint32_t id = 0, hash = 2166136261u;
  bool digits = false;
  std::uint32_t group = 0;
  for (std::size_t i = 0; i <= host.size(); ++i) {
    const bool d = i < host.size() && host[i] >= '0' && host[i] <= '9';
    if (d) {
      group = (group * 10 + static_cast<std::uint32_t>(host[i] - '0')) % kNodes;
      digits = true;
    } else if (i > 0 && host[i - 1] >= '0' && host[i - 1] <= '9') {
      id = (id * 257 + group) % kNodes;
      group = 0;
    }
    if (i < host.size()) hash = (hash ^ static_cast<unsigned char>(host[i])) * 16777619u;
  }
  return static_cast<std::int32_t>(digits ? id : hash % kNodes);
}

/// "worker-0: ", "node017: ", "ip-10-0-0-1.ec2.internal: ", pdsh's "10.0.0.7: ": a host name
/// or an IPv4 address, then ": ".
std::size_t host_token(std::string_view s) {
  std::size_t i = 0;
  bool letter = false, digit_or_dash = false;
  while (i < s.size() && i < 64 &&
         (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '-' || s[i] == '.')) {
    letter = letter || is_alpha(s[i]);
    digit_or_dash = digit_or_dash || is_digit(s[i]) || s[i] == '-';
    ++i;
  }
  std::size_t dots = 0;
  for (std::size_t k = 0; k < i; ++k) dots += s[k] == '.' ? 1 : 0;
  const bool ipv4 = !letter && dots == 3 && is_digit(s[0]) && is_digit(s[i - 1]);
  if (i == 0 || (!ipv4 && (!letter || !digit_or_dash || !is_alpha(s[0])))) return 0;
  if (i + 2 > s.size() || s[i] != ':' || s[i + 1] != ' ' || i + 2 == s.size()) return 0;
  return i + 2;
}

/// One prefix at the start of `s`; fills `a`. Returns the characters used, 0 when none.
std::size_t one_prefix(std::string_view s, LineAttrs& a) {
  std::size_t n = 0;
  if (s[0] == '>') {
    n = 1;
    while (n < s.size() && s[n] == '>') ++n;
    return n;
  }
  double t = 0;
  if ((n = timestamp_token(s, t)) > 0 || (n = level_bracket_token(s, t)) > 0) {
    // The outermost dated timestamp wins (a launcher's clock over the framework's own); a
    // year-less glog time gives way to a dated one.
    if (std::isnan(a.timestamp_s) || a.timestamp_s < kYearlessLimit) a.timestamp_s = t;
    return n;
  }
  std::int32_t r = -1;
  bool local = false;
  if ((n = bracket_rank_token(s, r, local)) > 0 || (n = plain_rank_token(s, r)) > 0) {
    // "0: [default3]:": node 0's local rank 3; "worker-1: [default3]:": worker-1's.
    if (local && a.rank >= 0 && !a.local_rank && a.rank < kNodeRankStride / 2) {
      a.node = a.rank;
      r += a.node * kNodeRankStride;
    } else if (local && a.rank < 0 && !a.host.empty()) {
      a.node = host_node(a.host);
      r += a.node * kNodeRankStride;
    }
    a.rank = r;
    a.local_rank = local;
    return n;
  }
  if ((n = launcher_token(s)) > 0 || (n = host_token(s)) > 0) {
    a.host = s.substr(0, n);
    return n;
  }
  return 0;
}

/// Whether a prefix of the grammar may start with c: a quote, a bracket, a launcher's
/// parenthesis, a digit (a date, srun's label, an IPv4 host) or a letter (glog, "rank",
/// "stdout", a host name); one_prefix() is not tried on any other byte. A JSON line's '{'
/// starts none: peeling it was 3% of a native log's parse (perf).
bool may_start_prefix(char c) {
  return c == '>' || c == '[' || c == '(' || is_digit(c) || is_alpha(c);
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A launcher that tags every write of a process (torchrun --tee, TorchX) tags the write after
/// a tqdm redraw too: "[trainer0|0]:1|1|Loss: 2.8: 1/101 [00:20<34:51, 20.91s/it][trainer0|0]:"
/// ends with the next write's tag. That copy of the line's own tag is not part of its body.
void drop_repeated_tag(std::string_view& body, std::string_view tag) {
  const std::string_view rest = trim_right(body);
  if (tag.empty() || tag[0] != '[' || rest.size() <= tag.size() ||
      rest.substr(rest.size() - tag.size()) != tag)
    return;
  body = trim_right(rest.substr(0, rest.size() - tag.size()));
}

}  // namespace

PeeledLine peel_prefixes(std::string_view line) {
  PeeledLine out;
  std::size_t i = 0;
  skip_spaces(line, i);
  std::string_view tag;  // the last rank tag peeled
  for (int k = 0; k < kMaxPrefixes && i < line.size() && may_start_prefix(line[i]); ++k) {
    const std::int32_t rank_before = out.attrs.rank;
    const std::size_t n = one_prefix(line.substr(i), out.attrs);
    if (n == 0) break;
    if (out.attrs.rank != rank_before) tag = trim_right(line.substr(i, n));
    i += n;
    ++out.attrs.prefixes;
    skip_spaces(line, i);
  }
  out.body = line.substr(i);
  drop_repeated_tag(out.body, tag);
  return out;
}

namespace {

/// Removes ANSI escape sequences (CSI "ESC [ ... final", and two-byte "ESC x") into `out`.
void strip_escapes(std::string_view s, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
      i = j;
    } else if (i + 1 < s.size()) {
      ++i;
    }
  }
}

}  // namespace

PeeledLine LinePeeler::peel(std::string_view raw, std::uint64_t number, bool may_have_escape) {
  if (raw.size() >= 3 && raw.substr(0, 3) == "\xEF\xBB\xBF") raw.remove_prefix(3);
  if (may_have_escape && raw.find('\x1b') != std::string_view::npos) {
    strip_escapes(raw, scratch_);
    const std::size_t n = scratch_.size();
    scratch_.append(kBodyPadding, '\0');  // a body stays safe for simdjson's padded reads
    raw = std::string_view(scratch_.data(), n);
  }
  PeeledLine p = peel_prefixes(raw);
  if (number != 0 && number == last_number_) {
    // A later \r segment of the same physical line: the line's prefixes hold for it too.
    if (p.attrs.rank < 0) p.attrs.rank = line_attrs_.rank;
    if (std::isnan(p.attrs.timestamp_s)) p.attrs.timestamp_s = line_attrs_.timestamp_s;
    if (p.attrs.host.empty()) p.attrs.host = line_attrs_.host;
    return p;
  }
  last_number_ = number;
  line_attrs_ = p.attrs;
  line_attrs_.host = {};  // a view into this segment; not kept past it
  const bool only_time = p.body.empty() && !std::isnan(p.attrs.timestamp_s);
  if (only_time) {
    carried_timestamp_s_ = p.attrs.timestamp_s;
  } else if (!p.body.empty()) {
    if (std::isnan(p.attrs.timestamp_s)) p.attrs.timestamp_s = carried_timestamp_s_;
    carried_timestamp_s_ = std::numeric_limits<double>::quiet_NaN();
  }
  return p;
}

std::string peel_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  LinePeeler peeler;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += peeler.peel(line).body;
    if (nl < text.size()) out += '\n';  // a last line cut off (a head) stays unterminated
    pos = nl + 1;
  }
  return out;
}

}  // namespace mfu::detail
