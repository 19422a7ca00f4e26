// The fuzz property of combining per-rank streams: any table of records gives the same job
// records on the fast paths (in place, by index) as on the reference path that copies every
// stream out. The input's bytes are read as records, four bytes each.
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "ingest/rank_streams.hpp"
#include "job_records_difference.hpp"
#include "properties.hpp"

namespace mfu::fuzz {
namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Decoded {
  IterationTable table;
  std::vector<detail::RestartMark> marks;
  RunMeta meta;
};

/// Four bytes a record: rank and file; the step's move from the rank's last step (-3 .. +4,
/// or no step); time and timestamp; a repeat of the line, a stated restart, a phase timer.
Decoded decode(std::string_view data) {
  Decoded d;
  if (!data.empty() && (static_cast<unsigned char>(data[0]) & 1) != 0)
    d.meta.set("grad_accum", 2.0, "fuzz");
  std::int64_t last_step[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double clock = 1.7e9;
  std::uint32_t line = 0;
  for (std::size_t k = 1; k + 4 <= data.size() && d.table.size() < 4000; k += 4) {
    const auto b = [&](std::size_t j) { return static_cast<unsigned char>(data[k + j]); };
    Iteration it;
    const int r = b(0) % 6;  // 5: untagged
    it.rank = r == 5 ? -1 : r;
    it.file = static_cast<std::uint16_t>((b(0) / 6) % 3);
    const int move = b(1) % 9;
    std::int64_t& last = last_step[r];
    it.step = move == 8 ? -1 : (last = std::max<std::int64_t>(0, last + move - 3));
    it.time_s = (b(2) % 16 == 0) ? kUnknown : 0.5 + (b(2) % 16) / 8.0;
    clock += known(it.time_s) ? it.time_s : 1.0;
    it.timestamp_s = (b(2) & 0x80) != 0 ? kUnknown : clock;
    it.line = (line += 1 + (b(3) & 1));
    it.loss = (b(3) & 2) != 0 ? kUnknown : 2.0 + (b(1) >> 4) / 16.0;
    it.tokens = (b(3) & 4) != 0 ? kUnknown : 4096;
    it.at(Phase::kData) = (b(3) & 8) != 0 ? kUnknown : (b(2) >> 4) / 100.0;
    d.table.push_back(it);
    if ((b(3) & 0x30) == 0x30) {  // the line again: identical, or a micro-batch's time later
      ++it.line;
      if ((b(3) & 0x40) != 0 && known(it.timestamp_s)) it.timestamp_s += 1.0;
      d.table.push_back(it);
    }
    if (b(3) >= 0xF0) d.marks.push_back({it.file, it.line, (b(3) & 1) ? it.rank : -1, {}});
    if ((b(1) & 0xF0) == 0xF0) d.marks.push_back({0, 0, -1, d.table.size() - 1});
  }
  return d;
}

/// The first field of a record that differs, by name ("" when none).
std::string record_difference(const Iteration& x, const Iteration& y) {
  if (x.step != y.step) return "step";
  if (x.count != y.count) return "count";
  if (x.line != y.line) return "line";
  if (x.rank != y.rank) return "rank";
  if (x.file != y.file) return "file";
  const std::pair<const char*, std::pair<double, double>> values[] = {
      {"time_s", {x.time_s, y.time_s}},
      {"timestamp_s", {x.timestamp_s, y.timestamp_s}},
      {"tokens", {x.tokens, y.tokens}},
      {"samples", {x.samples, y.samples}},
      {"loss", {x.loss, y.loss}},
      {"model_flops", {x.model_flops, y.model_flops}},
      {"reported_flops_per_gpu", {x.reported_flops_per_gpu, y.reported_flops_per_gpu}},
      {"reported_mfu", {x.reported_mfu, y.reported_mfu}}};
  for (const auto& [name, v] : values)
    if (!same_bits(v.first, v.second)) return name;
  for (std::size_t p = 0; p < kPhaseCount; ++p)
    if (!same_bits(x.phase[p], y.phase[p])) return "phase " + std::to_string(p);
  return "";
}

std::string stream_difference(const RankStream& x, const RankStream& y) {
  const bool same = x.rank == y.rank && x.records == y.records && x.restarts == y.restarts &&
                    x.slowest_steps == y.slowest_steps && same_bits(x.mean_time_s, y.mean_time_s) &&
                    same_bits(x.mean_data_s, y.mean_data_s) &&
                    same_bits(x.first_timestamp_s, y.first_timestamp_s) &&
                    same_bits(x.last_timestamp_s, y.last_timestamp_s);
  return same ? "" : "the summary of rank " + std::to_string(x.rank) + " differs";
}

}  // namespace

std::string job_records_difference(const detail::JobRecords& a, const detail::JobRecords& b) {
  if (a.table.size() != b.table.size())
    return "record counts " + std::to_string(a.table.size()) + " and " +
           std::to_string(b.table.size());
  for (std::size_t i = 0; i < a.table.size(); ++i)
    if (std::string field = record_difference(a.table[i], b.table[i]); !field.empty())
      return "record " + std::to_string(i) + ": " + field;
  if (a.incarnations != b.incarnations) return "incarnations";
  if (a.duplicates != b.duplicates || a.micro_batches != b.micro_batches ||
      a.rank_records != b.rank_records || a.reordered != b.reordered ||
      a.incarnations_disagree != b.incarnations_disagree)
    return "counts";
  if (a.streams.size() != b.streams.size()) return "stream counts";
  for (std::size_t s = 0; s < a.streams.size(); ++s)
    if (std::string d = stream_difference(a.streams[s], b.streams[s]); !d.empty()) return d;
  return "";
}

void check_rank_streams(std::string_view data) {
  Decoded d = decode(data);
  IterationTable copy = d.table;
  const detail::JobRecords fast =
      detail::combine_rank_streams(std::move(d.table), d.meta, d.marks, true);
  const detail::JobRecords ref =
      detail::combine_rank_streams(std::move(copy), d.meta, d.marks, false);
  const std::string difference = job_records_difference(fast, ref);
  require(difference.empty(), "the fast and reference paths differ: " + difference);
}

}  // namespace mfu::fuzz
