// Writes every crafted run of crafted_runs.hpp into a directory, to run mfu on them by hand:
//   build/tests/mfu_write_crafted DIR && build/mfu analyze DIR/stall_data_50.jsonl
// (the Megatron ones name neither GPU nor count: add --gpu a100-sxm4-80gb --gpus 8).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "generators/crafted_runs.hpp"

int main(int argc, char** argv) {
  using namespace mfu::crafted;
  if (argc != 2) {
    std::cerr << "usage: mfu_write_crafted DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::pair<const char*, Expected> runs[] = {
      {"stall_data_50.jsonl", stall_with_timer("data_s", 1.248e15)},
      {"stall_data_20.jsonl", stall_with_timer("data_s", 4.992e14)},
      {"stall_comm_50.jsonl", stall_with_timer("comm_s", 1.248e15)},
      {"stall_optimizer_50.jsonl", stall_with_timer("optimizer_s", 1.248e15)},
      {"stall_idle_50.jsonl", stall_with_timer("idle_s", 1.248e15)},
      {"megatron_batch_generator.log", megatron_stall_with_batch_generator()},
      {"checkpoint_inside.jsonl", event_inside_slow_step(false)},
      {"dst_forward.log", megatron_clock(3600)},
      {"dst_back.log", megatron_clock(-3600)},
      {"glog_new_year.log", megatron_clock(0, true)},
      {"slow_clock.log", megatron_clock(0, false, 0.9)},
      {"sentinels.jsonl", sentinel_values()},
      {"long_warmup.jsonl", long_warmup()},
      {"cut_last_line.log", megatron_cut_last_line()},
      {"one_impossible.jsonl", one_impossible_record()},
  };
  for (const auto& [name, e] : runs) {
    std::ofstream(dir / name) << e.text;
    std::cout << name << ": " << e.name << ", wall " << e.wall_s << " s, MFU " << e.mfu << '\n';
  }
  std::ofstream(dir / "mostly_impossible.jsonl") << mostly_impossible();
  std::cout << "mostly_impossible.jsonl: refused (exit 2)\n";
  return 0;
}
