// The analytical models behind `mfu whatif`, each with its source.
#include <cmath>

#include "mfu/error.hpp"
#include "mfu/whatif.hpp"

namespace mfu {
namespace {

void require_positive(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) throw Error(std::string(what) + " must be a positive number");
}

}  // namespace

// NCCL's bus bandwidth (nccl-tests doc/PERFORMANCE.md): an all-reduce moves 2(n-1)/n of the
// buffer over each rank's link, an all-gather or reduce-scatter (n-1)/n of the whole buffer.
double ring_allreduce_s(double bytes, double n, double bw) {
  require_positive(bw, "bandwidth");
  if (!(n >= 1) || !(bytes >= 0))
    throw Error("all-reduce needs at least one rank and a byte count >= 0");
  return 2.0 * (n - 1.0) / n * bytes / bw;
}

double ring_allgather_s(double bytes, double n, double bw) {
  require_positive(bw, "bandwidth");
  if (!(n >= 1) || !(bytes >= 0))
    throw Error("all-gather needs at least one rank and a byte count >= 0");
  return (n - 1.0) / n * bytes / bw;
}

// GPipe (Huang et al. 2019) and Narayanan et al. 2021 Sec. 2.2: with p stages and m micro-batches
// the bubble is (p-1)/m of the ideal time, (p-1)/(v*m) with v interleaved chunks per stage, so its
// share of the whole step is (p-1)/(v*m + p-1).
double pipeline_bubble_fraction(double p, double m, double v) {
  if (!(p >= 1) || !(m >= 1) || !(v >= 1))
    throw Error("the pipeline bubble needs p >= 1 stages, m >= 1 micro-batches, v >= 1 chunks");
  return (p - 1.0) / (v * m + p - 1.0);
}

// Young, "A first order approximation to the optimum checkpoint interval", CACM 1974.
double young_interval_s(double checkpoint_s, double mtbf_s) {
  require_positive(checkpoint_s, "checkpoint time");
  require_positive(mtbf_s, "mean time between failures");
  return std::sqrt(2.0 * checkpoint_s * mtbf_s);
}

// Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 2006,
// eq. 37: sqrt(2dM) [1 + 1/3 sqrt(d/2M) + d/(18M)] - d for d < 2M, else M.
double daly_interval_s(double checkpoint_s, double mtbf_s) {
  require_positive(checkpoint_s, "checkpoint time");
  require_positive(mtbf_s, "mean time between failures");
  const double d = checkpoint_s, m = mtbf_s;
  if (d >= 2.0 * m) return m;
  const double x = d / (2.0 * m);
  return std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - d;
}

// First-order model (Young 1974): each interval pays the save (d/tau); each failure, one every
// MTBF on average, throws away half an interval of work and pays the restart.
double checkpoint_loss_fraction(double interval_s, double checkpoint_s, double mtbf_s,
                                double restart_s) {
  require_positive(interval_s, "checkpoint interval");
  require_positive(mtbf_s, "mean time between failures");
  if (!(checkpoint_s >= 0) || !(restart_s >= 0))
    throw Error("checkpoint and restart times must be >= 0");
  return checkpoint_s / interval_s + (interval_s / 2.0 + restart_s) / mtbf_s;
}

}  // namespace mfu
