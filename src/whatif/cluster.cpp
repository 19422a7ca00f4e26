// Replays a job trace on a cluster of identical nodes, first come first served with no
// backfilling, and measures the GPU time left idle by fragmentation: free GPUs while the job
// at the head of the queue needs no more GPUs than the cluster has free in total, yet no node
// (or set of whole nodes) can take it.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <set>

#include "mfu/error.hpp"
#include "mfu/whatif.hpp"

namespace mfu {
namespace {

struct Running {
  double end = 0;
  std::size_t job = 0;
  std::vector<std::pair<int, int>> parts;  // (node, GPUs)
  bool operator>(const Running& o) const { return end > o.end; }
};

class Cluster {
 public:
  Cluster(int nodes, int per_node)
      : free_(static_cast<std::size_t>(nodes), per_node), per_node_(per_node) {
    for (int n = 0; n < nodes; ++n) by_free_.insert({per_node, n});
    total_free_ = static_cast<long long>(nodes) * per_node;
  }

  [[nodiscard]] long long total_free() const { return total_free_; }

  /// Where `gpus` would go, or nothing when it does not fit now.
  std::vector<std::pair<int, int>> place(int gpus, Placement how) const {
    std::vector<std::pair<int, int>> parts;
    if (gpus <= per_node_) {
      auto it = by_free_.end();
      if (how == Placement::kPack) {
        // Best fit: the fewest free GPUs that still fit (lowest node index on ties).
        it = by_free_.lower_bound({gpus, std::numeric_limits<int>::min()});
      } else if (!by_free_.empty()) {
        // Spread: the most free GPUs (lowest node index on ties).
        const int most = std::prev(by_free_.end())->first;
        if (most >= gpus) it = by_free_.lower_bound({most, std::numeric_limits<int>::min()});
      }
      if (it != by_free_.end()) parts.emplace_back(it->second, gpus);
      return parts;
    }
    // Larger than a node: whole free nodes, lowest indices first.
    const int need = (gpus + per_node_ - 1) / per_node_;
    int left = gpus;
    for (auto it = by_free_.lower_bound({per_node_, std::numeric_limits<int>::min()});
         it != by_free_.end() && static_cast<int>(parts.size()) < need; ++it) {
      const int take = std::min(left, per_node_);
      parts.emplace_back(it->second, take);
      left -= take;
    }
    if (static_cast<int>(parts.size()) < need) parts.clear();
    return parts;
  }

  void take(const std::vector<std::pair<int, int>>& parts, int sign) {
    for (const auto& [node, g] : parts) {
      auto& f = free_[static_cast<std::size_t>(node)];
      by_free_.erase({f, node});
      f -= sign * g;
      by_free_.insert({f, node});
      total_free_ -= sign * g;
    }
  }

 private:
  std::vector<int> free_;
  std::set<std::pair<int, int>> by_free_;  // (free GPUs, node)
  int per_node_;
  long long total_free_ = 0;
};

}  // namespace

ClusterResult replay_cluster(const std::vector<Job>& jobs, int nodes, int gpus_per_node,
                             Placement placement) {
  if (nodes < 1 || gpus_per_node < 1)
    throw Error("the cluster needs at least one node with at least one GPU");
  ClusterResult r;
  r.placement = placement;
  r.start_s.assign(jobs.size(), kUnknown);
  const long long capacity = static_cast<long long>(nodes) * gpus_per_node;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (!(j.duration_s >= 0) || !std::isfinite(j.submit_s) || j.gpus < 1)
      throw Error("job '" + j.name + "' has a negative or missing duration, time or GPU count");
    if (j.gpus > capacity) {
      ++r.unschedulable;
      continue;
    }
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return jobs[a].submit_s < jobs[b].submit_s;
  });
  r.jobs = order.size();
  if (order.empty()) return r;

  Cluster cl(nodes, gpus_per_node);
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  std::deque<std::size_t> queue;
  std::vector<bool> blocked(jobs.size(), false);
  std::size_t next = 0;
  const double first_submit = jobs[order.front()].submit_s;
  double now = first_submit, last_end = first_submit, busy_gpu_s = 0, frag_gpu_s = 0, wait_sum = 0;
  while (next < order.size() || !queue.empty() || !running.empty()) {
    double t = std::numeric_limits<double>::infinity();
    if (next < order.size()) t = jobs[order[next]].submit_s;
    if (!running.empty()) t = std::min(t, running.top().end);
    if (!std::isfinite(t)) break;  // cannot happen: a queued job always fits an empty cluster
    // Idle to fragmentation over [now, t).
    if (!queue.empty() && jobs[queue.front()].gpus <= cl.total_free())
      frag_gpu_s += static_cast<double>(cl.total_free()) * (t - now);
    now = t;
    while (!running.empty() && running.top().end <= now) {
      cl.take(running.top().parts, -1);
      running.pop();
    }
    while (next < order.size() && jobs[order[next]].submit_s <= now) queue.push_back(order[next++]);
    while (!queue.empty()) {
      const Job& j = jobs[queue.front()];
      auto parts = cl.place(j.gpus, placement);
      if (parts.empty()) {
        if (j.gpus <= cl.total_free() && !blocked[queue.front()]) {
          blocked[queue.front()] = true;
          ++r.fragmentation_blocked_jobs;
        }
        break;
      }
      cl.take(parts, +1);
      r.start_s[queue.front()] = now;
      const double wait = now - j.submit_s;
      wait_sum += wait;
      r.max_wait_s = std::max(r.max_wait_s, wait);
      busy_gpu_s += j.gpus * j.duration_s;
      last_end = std::max(last_end, now + j.duration_s);
      running.push({now + j.duration_s, queue.front(), std::move(parts)});
      queue.pop_front();
    }
  }
  r.makespan_s = last_end - first_submit;
  r.mean_wait_s = wait_sum / static_cast<double>(r.jobs);
  r.utilization =
      r.makespan_s > 0 ? busy_gpu_s / (static_cast<double>(capacity) * r.makespan_s) : 0;
  r.fragmentation_idle_gpu_h = frag_gpu_s / 3600.0;
  return r;
}

}  // namespace mfu
