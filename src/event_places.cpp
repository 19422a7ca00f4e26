// place_events(): where each event stands among the records (see run.hpp).
#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "mfu/run.hpp"

namespace mfu {
namespace {

using Place = std::pair<std::uint16_t, std::uint32_t>;  // file, then line

Place place_of(const Event& e) {
  return {e.file, e.line};
}

/// The table's record indices in (file, line) order with their places, read once (empty when
/// the table is in that order already, the usual case: nothing is kept per record), and each
/// file's first record.
struct RecordOrder {
  std::vector<std::size_t> by_place;
  std::vector<Place> places;  // by table index, when by_place is not empty
  std::map<std::uint16_t, std::size_t> first_of_file;

  /// The k-th record in (file, line) order: its table index and place.
  [[nodiscard]] std::pair<std::size_t, Place> nth(const IterationTable& t, std::size_t k) const {
    if (by_place.empty()) return {k, Place{t.file(k), t.line(k)}};
    return {by_place[k], places[by_place[k]]};
  }
};

RecordOrder record_order(const IterationTable& t) {
  RecordOrder o;
  Place last{0, 0};
  bool ordered = true;
  for_each_record(
      t,
      [&](std::size_t i, const Iteration& it) {
        const Place p{it.file, it.line};
        if (i == 0 || p.first != last.first) o.first_of_file.try_emplace(p.first, i);
        ordered = ordered && !(p < last);
        last = p;
      },
      RecordFields::kLine | RecordFields::kFile);
  if (ordered) return o;
  // Out of order (a table put back in step order): the places are read again and kept, so
  // that neither the sort nor the walk reads a record's place through the table.
  o.places.resize(t.size());
  for_each_record(
      t,
      [&](std::size_t i, const Iteration& it) {
        o.places[i] = {it.file, it.line};
      },
      RecordFields::kLine | RecordFields::kFile);
  o.by_place.resize(t.size());
  std::iota(o.by_place.begin(), o.by_place.end(), std::size_t{0});
  std::stable_sort(o.by_place.begin(), o.by_place.end(),
                   [&](std::size_t a, std::size_t b) { return o.places[a] < o.places[b]; });
  return o;
}

}  // namespace

std::vector<SlottedEvent> place_events(const IterationTable& t, std::vector<const Event*> events) {
  std::vector<SlottedEvent> placed;
  if (events.empty()) return placed;
  std::stable_sort(events.begin(), events.end(),
                   [](const Event* a, const Event* b) { return place_of(*a) < place_of(*b); });
  const RecordOrder order = record_order(t);
  const std::size_t n = t.size();
  std::size_t passed = 0;      // records passed in (file, line) order
  std::size_t after_all = 0;   // 1 + the greatest table index among them
  std::size_t after_file = 0;  // the same among those of the last passed record's file
  std::uint16_t file = 0;
  for (const Event* e : events) {
    for (; passed < n; ++passed) {
      const auto [i, p] = order.nth(t, passed);
      if (place_of(*e) < p) break;
      if (p.first != file) after_file = 0;
      file = p.first;
      after_all = std::max(after_all, i + 1);
      after_file = std::max(after_file, i + 1);
    }
    std::size_t slot = after_all;
    if (after_file > 0 && file == e->file) {
      slot = after_file;
    } else if (auto f = order.first_of_file.find(e->file); f != order.first_of_file.end()) {
      slot = f->second;
    }
    placed.push_back(SlottedEvent{e, slot});
  }
  std::stable_sort(placed.begin(), placed.end(),
                   [](const SlottedEvent& a, const SlottedEvent& b) { return a.slot < b.slot; });
  return placed;
}

}  // namespace mfu
