// Property over generated runs: the waterfall adds up to a wall time that the generator
// computes on its own (the clock it simulated, or the durations it wrote plus the events it
// put between steps), whatever the mix of stalls, timers, events, restarts and clocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "generators/crafted_runs.hpp"
#include "mfu/analysis.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"

namespace mfu {
namespace {

struct Generated {
  std::string text;
  double wall_s = 0;    ///< what the generator's own clock says
  double inside_s = 0;  ///< checkpoint seconds written inside slow steps
  bool timestamps = false;
};

/// A random native run. Steps take 0.9..1.1 s (the median is near 1 s); some stall with a
/// data timer; some host a checkpoint event inside (the step is 1.1 s + its duration, so its
/// excess over the median holds the event); others are followed by a checkpoint outside steps
/// (after a step of at most 0.9 s, below the median, so no excess can take it); one run in
/// three restarts from an earlier step; half carry timestamps (whole seconds in some), with
/// gaps between steps that only the clock sees.
Generated generate(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  Generated g;
  g.timestamps = u(rng) < 0.5;
  const bool whole_seconds = u(rng) < 0.3;
  const int steps = 20 + static_cast<int>(u(rng) * 200);
  const int restart_at = u(rng) < 0.33 ? steps / 2 : -1;
  double clock = 1.7e9 + std::floor(u(rng) * 1e6);
  const double start = clock;
  double durations = 0;
  g.text = crafted::native_meta();
  auto stamp = [&](double t) {
    return g.timestamps ? R"(,"timestamp":)" + crafted::num(whole_seconds ? std::floor(t) : t)
                        : std::string();
  };
  int step = 0;
  for (int k = 0; k < steps; ++k) {
    step = (k == restart_at) ? step - 5 : step + 1;
    const double r = u(rng);
    double t = 0.9 + 0.2 * u(rng);
    std::string phases = R"("data_s":0.01)";
    double inside = 0, outside = 0;
    if (r < 0.05) {
      t += 2 + 3 * u(rng);  // a stall, half explained by the data timer
      phases = R"("data_s":)" + crafted::num((t - 1) / 2);
    } else if (r < 0.08) {
      inside = 5 + 10 * u(rng);
      t = 1.1 + inside;
    } else if (r < 0.11) {
      t = 0.5 + 0.4 * u(rng);
      outside = 3 + 5 * u(rng);
    }
    if (g.timestamps && u(rng) < 0.1) clock += 2 * u(rng);  // a gap only the clock sees
    clock += t;
    durations += t;
    g.inside_s += inside;
    g.text += crafted::native_step(step, t, 1e14, phases, stamp(clock));
    const std::string kind = R"({"type":"event","kind":"checkpoint","step":)" +
                             std::to_string(step) + R"(,"duration_s":)";
    if (inside > 0) g.text += kind + crafted::num(inside) + stamp(clock) + "}\n";
    if (outside > 0) {
      clock += outside;
      durations += outside;
      g.text += kind + crafted::num(outside) + stamp(clock) + "}\n";  // stamped when it ended
    }
  }
  // The first record starts one step before its stamp: the clock began at `start`.
  g.wall_s = g.timestamps ? clock - start : durations;
  return g;
}

TEST(AttributionProperty, BucketsAddUpToTheGeneratorsOwnWallTime) {
  std::mt19937 rng(20261201);
  int with_clock = 0;
  for (int run = 0; run < 300; ++run) {
    const Generated g = generate(rng);
    SCOPED_TRACE("generated run " + std::to_string(run));
    if (std::getenv("MFU_DUMP_GENERATED")) {
      FILE* f = std::fopen(("/tmp/gen" + std::to_string(run) + ".jsonl").c_str(), "w");
      std::fputs(g.text.c_str(), f);
      std::fclose(f);
    }
    Analysis a;
    ASSERT_NO_THROW(a = analyze(ingest_text(g.text, "gen.jsonl"), AnalyzeOptions{}));
    ASSERT_NO_THROW(verify_attribution(a));
    if (g.timestamps && a.clock_source == "the log's timestamps") {
      ++with_clock;
      // Whole-second stamps lose up to a second at each end of the run.
      EXPECT_NEAR(a.wall_time_s, g.wall_s, 2.0);
    } else {
      EXPECT_NEAR(a.wall_time_s, g.wall_s, 1e-9 * g.wall_s);
    }
    // Checkpoints inside slow steps are measured once, never twice.
    EXPECT_GE(a.bucket(BucketId::kCheckpoint)->seconds, g.inside_s - 1e-6);
  }
  EXPECT_GT(with_clock, 100);
}

}  // namespace
}  // namespace mfu
