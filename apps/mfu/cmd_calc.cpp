// `mfu calc`: flags -> mfu::solve -> report.
#include <memory>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu::cli {

Runner add_calc(CLI::App& app, GlobalOptions& g) {
  struct Flags {
    ModelFlags model;
    HardwareFlags hw;
    std::string batch, tokens_per_step, flops, step_time, tokens_per_sec, mfu, train_tokens, price,
        output = "text", out_file;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("calc", "Solve the MFU identity for whatever is unknown");
  cmd->footer(
      "MFU = model FLOPs per step / (step time x GPUs x dense peak per GPU).\n"
      "Give any consistent subset of work, time, hardware and MFU; mfu prints the rest.\n\n"
      "Examples:\n"
      "  mfu calc --flops 35T --step-time 330ms --gpus 16 --peak 19.5T\n"
      "  mfu calc --model llama3-70b --gpus 1024 --gpu h100 --tokens-per-sec 1.2M\n"
      "  mfu calc --model llama3-8b --batch 512 --gpu h100 --gpus 64 --mfu 40%   # solve step "
      "time\n"
      "  mfu calc --params 540.35B --layers 118 --heads 48 --head-dim 256 --seq-len 2048 \\\n"
      "           --gpu tpu-v4 --gpus 6144 --tokens-per-sec 238.3k               # PaLM: 46.2%\n"
      "  mfu calc --model llama3-8b --gpu h100 --gpus 64 --tokens-per-sec 1M --train-tokens 15T "
      "\\\n"
      "           --price-per-gpu-hour 2.5 --output json");
  add_model_flags(cmd, f->model);
  add_hardware_flags(cmd, f->hw);
  cmd->add_option("--batch", f->batch, "Sequences per step (global); needs the sequence length")
      ->group("Work");
  cmd->add_option("--tokens-per-step", f->tokens_per_step, "Tokens per step (global)")
      ->group("Work");
  cmd->add_option("--flops", f->flops, "Model FLOPs per step, all GPUs together, e.g. 35T")
      ->group("Work");
  cmd->add_option("--step-time", f->step_time, "Time per step, e.g. 330ms")->group("Time");
  cmd->add_option("--tokens-per-sec", f->tokens_per_sec, "Tokens per second (global), e.g. 1.2M")
      ->group("Time");
  cmd->add_option("--mfu", f->mfu, "MFU, e.g. 40% (to solve for another unknown)");
  cmd->add_option("--train-tokens", f->train_tokens,
                  "Token budget, e.g. 15T: adds time to train and GPU-hours");
  cmd->add_option("--price-per-gpu-hour", f->price, "Price of one GPU-hour, e.g. 2.50: adds cost");
  cmd->add_option("--output", f->output, "text, json or markdown")->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file, "Write the report to FILE instead of stdout");

  return [f, &g]() {
    CalcInputs in;
    in.model = build_model(f->model);
    if (!f->model.convention.empty()) in.convention = parse_convention(f->model.convention);
    if (!f->model.recompute.empty()) in.recompute = parse_recompute(f->model.recompute);
    in.batch = quantity(f->batch, Quantity::kCount);
    in.tokens_per_step = quantity(f->tokens_per_step, Quantity::kCount);
    in.flops_per_step = quantity(f->flops, Quantity::kFlops);
    in.step_time_s = quantity(f->step_time, Quantity::kDuration);
    in.tokens_per_s = quantity(f->tokens_per_sec, Quantity::kRate);
    in.mfu = quantity(f->mfu, Quantity::kRatio);
    in.train_tokens = quantity(f->train_tokens, Quantity::kCount);
    in.price_per_gpu_hour = quantity(f->price, Quantity::kMoney);
    if (!f->hw.gpu.empty()) in.gpu = f->hw.gpu;
    in.gpus = quantity(f->hw.gpus, Quantity::kCount);
    in.peak_flops = quantity(f->hw.peak, Quantity::kFlopRate);
    if (!f->hw.dtype.empty()) in.dtype = parse_dtype(f->hw.dtype);
    const OutputFormat format = parse_output_format(f->output);
    Output out(f->out_file);
    const CalcResult r = solve(in, load_gpu_db(g));
    RenderOptions opt;
    opt.color = out.to_stdout() && use_color(g);
    render_calc(r, format, opt, out.stream());
    out.commit();
    return kExitOk;
  };
}

}  // namespace mfu::cli
