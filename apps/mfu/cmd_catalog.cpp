// `mfu gpus [NAME]` and `mfu models`: list the built-in databases.
#include <memory>

#include "cli_common.hpp"

namespace mfu::cli {

Runner add_gpus(CLI::App& app, GlobalOptions& g) {
  struct Flags {
    std::string name, output = "text";
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd =
      app.add_subcommand("gpus", "List accelerators and their dense peaks, or show one");
  cmd->footer(
      "Examples:\n"
      "  mfu gpus                          # the table\n"
      "  mfu gpus h100                     # one accelerator (plain h100 resolves to h100-sxm)\n"
      "  mfu gpus 'NVIDIA H100 80GB HBM3'  # the name nvidia-smi prints\n"
      "  mfu gpus --output json\n"
      "Add or override entries with --gpu-db FILE or MFU_GPU_DB (layout of data/gpus.json).");
  cmd->add_option("name", f->name, "Accelerator to show");
  cmd->add_option("--output", f->output, "text, json or markdown")->capture_default_str();
  return [f, &g]() {
    const OutputFormat format = parse_output_format(f->output);
    const GpuDatabase db = load_gpu_db(g);
    if (f->name.empty()) {
      render_gpu_list(db, format, std::cout);
    } else {
      const GpuMatch m = db.resolve(f->name);
      render_gpu(*m.spec, m.note, format, std::cout);
    }
    return kExitOk;
  };
}

Runner add_models(CLI::App& app, GlobalOptions&) {
  struct Flags {
    std::string name, output = "text";
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List model presets with parameters and FLOPs per token, or show one");
  cmd->footer(
      "Examples:\n"
      "  mfu models\n"
      "  mfu models llama3-8b               # one preset, FLOPs per token under every convention\n"
      "  mfu models path/to/config.json     # a Hugging Face config\n"
      "  mfu models --output json\n"
      "Use a preset with --model ID in calc, analyze, check and whatif; or pass a config.json "
      "path.");
  cmd->add_option("name", f->name, "Preset or config.json to show");
  cmd->add_option("--output", f->output, "text, json or markdown")->capture_default_str();
  return [f]() {
    const OutputFormat format = parse_output_format(f->output);
    if (f->name.empty()) {
      render_models(ModelCatalog::builtin(), format, std::cout);
    } else {
      ModelFlags mf;
      mf.model = f->name;
      render_model(*build_model(mf), format, std::cout);
    }
    return kExitOk;
  };
}

}  // namespace mfu::cli
