// Uses the installed library: the classic worked example must give 34.0%.
#include <cmath>
#include <cstdio>
#include <mfu/calc.hpp>
#include <mfu/version.hpp>

int main() {
  mfu::CalcInputs in;
  in.flops_per_step = 35e12;
  in.step_time_s = 0.330;
  in.gpus = 16;
  in.peak_flops = 19.5e12;
  const mfu::CalcResult r = mfu::solve(in);
  std::printf("mfu %s: %.3f\n", MFU_VERSION, *r.mfu);
  return std::fabs(*r.mfu - 0.33993) < 1e-4 ? 0 : 1;
}
