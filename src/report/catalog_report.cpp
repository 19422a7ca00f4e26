// Renders the accelerator database (`mfu gpus`) and the model presets (`mfu models`).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "mfu/error.hpp"
#include "mfu/flops.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"

namespace mfu {
namespace {

std::string tflops(const GpuSpec& s, Dtype d) {
  auto p = s.dense_peak(d);
  return p ? format_number(*p / 1e12, 5) : "-";
}

nlohmann::json gpu_json(const GpuSpec& s) {
  nlohmann::json j;
  j["id"] = s.id;
  j["name"] = s.name;
  j["vendor"] = s.vendor;
  j["aliases"] = s.aliases;
  nlohmann::json dense = nlohmann::json::object(), sparse = nlohmann::json::object();
  for (const auto& [d, v] : s.dense_flops) dense[to_string(d)] = v;
  for (const auto& [d, v] : s.sparse_flops) sparse[to_string(d)] = v;
  j["dense_peak_flops_per_s"] = dense;
  j["sparse_peak_flops_per_s"] = sparse;
  j["memory_bytes"] = s.memory_bytes;
  j["memory_bandwidth_bytes_per_s"] = s.memory_bandwidth;
  j["interconnect"] = s.interconnect;
  j["interconnect_bandwidth_bytes_per_s"] = s.interconnect_bandwidth;
  j["tdp_w"] = s.tdp_w ? nlohmann::json(*s.tdp_w) : nlohmann::json(nullptr);
  j["source"] = s.source;
  j["interconnect_source"] = s.interconnect_source;
  if (!s.peak_note.empty()) j["peak_note"] = s.peak_note;
  return j;
}

}  // namespace

void render_gpu_list(const GpuDatabase& db, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["accelerators"] = nlohmann::json::array();
    for (const auto& s : db.all()) j["accelerators"].push_back(gpu_json(s));
    nlohmann::json defaults = nlohmann::json::object();
    for (const auto& [k, v] : db.defaults()) defaults[k] = v;
    j["defaults"] = defaults;
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const bool md = format == OutputFormat::kMarkdown;
  if (format != OutputFormat::kText && !md) throw Error("mfu gpus writes text, json or markdown");
  constexpr auto head = FMT_STRING("{:<22} {:<28} {:>9} {:>9} {:>9} {:>8} {:>7} {:>9} {:>6}\n");
  if (md) {
    out << "| id | name | bf16 | fp16 | fp8 | tf32 | memory GB | interconnect GB/s | TDP W |\n"
           "|---|---|---|---|---|---|---|---|---|\n";
  } else {
    out << "dense peak TFLOP/s per accelerator (sparse figures are never used for MFU)\n";
    out << fmt::format(head, "id", "name", "bf16", "fp16", "fp8", "tf32", "mem GB", "link GB/s",
                       "TDP W");
  }
  for (const auto& s : db.all()) {
    const std::string tdp = s.tdp_w ? format_number(*s.tdp_w, 5) : "-";
    const std::string mem = format_number(s.memory_bytes / 1e9, 4);
    const std::string link =
        s.interconnect_bandwidth > 0 ? format_number(s.interconnect_bandwidth / 1e9, 5) : "-";
    if (md) {
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", s.id, s.name,
                         tflops(s, Dtype::kBf16), tflops(s, Dtype::kFp16), tflops(s, Dtype::kFp8),
                         tflops(s, Dtype::kTf32), mem, link, tdp);
    } else {
      out << fmt::format(head, s.id, s.name.substr(0, 28), tflops(s, Dtype::kBf16),
                         tflops(s, Dtype::kFp16), tflops(s, Dtype::kFp8), tflops(s, Dtype::kTf32),
                         mem, link, tdp);
    }
  }
  if (!md)
    out << "ambiguous names resolve to a default (plain 'h100' is h100-sxm); 'mfu gpus NAME' shows "
           "one\n";
}

void render_gpu(const GpuSpec& s, const std::string& note, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kJson) {
    nlohmann::json j = gpu_json(s);
    j["schema_version"] = kJsonSchemaVersion;
    if (!note.empty()) j["note"] = note;
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  if (format != OutputFormat::kText && format != OutputFormat::kMarkdown)
    throw Error("mfu gpus writes text, json or markdown");
  out << fmt::format("{} ({})\n", s.name, s.id);
  if (!note.empty()) out << "note: " << note << '\n';
  out << fmt::format("  vendor        {}\n", s.vendor);
  out << "  dense peak    ";
  bool first = true;
  for (const auto& [d, v] : s.dense_flops) {
    out << (first ? "" : ", ") << to_string(d) << ' ' << format_flop_rate(v);
    first = false;
  }
  out << '\n';
  if (!s.peak_note.empty()) out << fmt::format("  peak note     {}\n", s.peak_note);
  if (!s.sparse_flops.empty()) {
    out << "  sparse peak   ";
    first = true;
    for (const auto& [d, v] : s.sparse_flops) {
      out << (first ? "" : ", ") << to_string(d) << ' ' << format_flop_rate(v);
      first = false;
    }
    out << "  (never used for MFU)\n";
  }
  out << fmt::format("  memory        {} GB {}\n", format_number(s.memory_bytes / 1e9, 4),
                     s.memory_bandwidth > 0
                         ? "at " + format_number(s.memory_bandwidth / 1e12, 4) + " TB/s"
                         : std::string("(bandwidth not published)"));
  out << fmt::format("  interconnect  {} {}\n", s.interconnect,
                     s.interconnect_bandwidth > 0
                         ? format_number(s.interconnect_bandwidth / 1e9, 5) + " GB/s"
                         : std::string("(bandwidth not published)"));
  out << fmt::format("  TDP           {}\n",
                     s.tdp_w ? format_number(*s.tdp_w, 5) + " W" : std::string("not published"));
  out << fmt::format("  aliases       {}\n", fmt::join(s.aliases, ", "));
  out << fmt::format("  source        {}\n", s.source);
  out << fmt::format("  link source   {}\n", s.interconnect_source);
}

void render_models(const ModelCatalog& catalog, OutputFormat format, std::ostream& out) {
  struct Row {
    const ModelShape* m;
    ParamCount p;
    FlopsPerToken palm;
    std::optional<FlopsPerToken> megatron;
  };
  std::vector<Row> rows;
  for (const auto& m : catalog.all()) {
    Row r{&m, count_params(m), training_flops_per_token(m, Convention::kPalm, Recompute::kNone),
          std::nullopt};
    try {
      r.megatron = training_flops_per_token(m, Convention::kMegatron, Recompute::kNone);
    } catch (const Error&) {
    }
    rows.push_back(std::move(r));
  }
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["models"] = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json e;
      e["id"] = r.m->id;
      e["name"] = r.m->name;
      e["params"] = r.p.total;
      e["active_params"] = r.p.active;
      e["matmul_params"] = r.p.matmul_active;
      e["seq_len"] = r.m->seq_len;
      e["layers"] = r.m->layers;
      e["hidden"] = r.m->hidden;
      e["heads"] = r.m->heads;
      e["kv_heads"] = r.m->eff_kv_heads();
      e["ffn"] = r.m->eff_ffn();
      e["vocab"] = r.m->vocab;
      if (r.m->is_moe()) {
        e["experts"] = r.m->experts;
        e["top_k"] = r.m->top_k;
      }
      e["model_flops_per_token"] = {{"palm", r.palm.model}};
      if (r.megatron) e["model_flops_per_token"]["megatron"] = r.megatron->model;
      e["source"] = r.m->source;
      j["models"].push_back(e);
    }
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  const bool md = format == OutputFormat::kMarkdown;
  if (format != OutputFormat::kText && !md) throw Error("mfu models writes text, json or markdown");
  if (md) {
    out << "| id | name | params | active | seq_len | FLOPs/token (palm) | FLOPs/token (megatron) "
           "|\n"
           "|---|---|---|---|---|---|---|\n";
  } else {
    out << "training FLOPs per token at the preset's sequence length\n";
    out << fmt::format("{:<14} {:<32} {:>9} {:>9} {:>7} {:>12} {:>12}\n", "id", "name", "params",
                       "active", "seq", "palm", "megatron");
  }
  for (const auto& r : rows) {
    const std::string mega = r.megatron ? format_flops(r.megatron->model) : "-";
    if (md) {
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.m->id, r.m->name,
                         format_count(r.p.total), format_count(r.p.active), r.m->seq_len,
                         format_flops(r.palm.model), mega);
    } else {
      out << fmt::format("{:<14} {:<32} {:>9} {:>9} {:>7} {:>12} {:>12}\n", r.m->id,
                         r.m->name.substr(0, 32), format_count(r.p.total), format_count(r.p.active),
                         r.m->seq_len, format_flops(r.palm.model), mega);
    }
  }
}

void render_model(const ModelShape& m, OutputFormat format, std::ostream& out) {
  // Every convention mfu knows, so a user can see what each framework would count.
  constexpr Convention kAll[] = {Convention::kPalm,
                                 Convention::kMegatron,
                                 Convention::kMegatron2024,
                                 Convention::kMegatron2023,
                                 Convention::kMegatronDeepSpeed,
                                 Convention::kMaxText,
                                 Convention::kMaxTextFullAttention,
                                 Convention::kTorchtitan2024};
  const ParamCount p = count_params(m);
  std::vector<std::pair<Convention, std::string>> per;  // FLOPs per token, or why not
  nlohmann::json flops = nlohmann::json::object();
  for (Convention c : kAll) {
    try {
      const FlopsPerToken f = training_flops_per_token(m, c, Recompute::kNone);
      per.emplace_back(c, format_flops(f.model));
      flops[to_string(c)] = f.model;
    } catch (const Error& e) {
      per.emplace_back(c, std::string("- (") + e.what() + ")");
    }
  }
  if (format == OutputFormat::kJson) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["id"] = m.id;
    j["name"] = m.name;
    j["source"] = m.source;
    j["shape"] = {{"layers", m.layers},           {"hidden", m.hidden},   {"heads", m.heads},
                  {"kv_heads", m.eff_kv_heads()}, {"ffn", m.eff_ffn()},   {"vocab", m.vocab},
                  {"seq_len", m.seq_len},         {"experts", m.experts}, {"top_k", m.top_k}};
    j["params"] = {{"total", p.total}, {"active", p.active}, {"matmul_active", p.matmul_active}};
    j["model_flops_per_token"] = flops;
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  if (format != OutputFormat::kText && format != OutputFormat::kMarkdown)
    throw Error("mfu models writes text, json or markdown");
  out << fmt::format("{} ({})\n", m.name.empty() ? m.id : m.name, m.id);
  out << fmt::format("  shape         {} layers, hidden {}, {} heads ({} KV), FFN {}, vocab {}\n",
                     m.layers, m.hidden, m.heads, m.eff_kv_heads(), m.eff_ffn(), m.vocab);
  if (m.is_moe())
    out << fmt::format("  experts       {} routed, top {}, {} shared\n", m.experts, m.top_k,
                       m.shared_experts);
  out << fmt::format("  parameters    {} total, {} active, {} in matmuls (the N of 6N)\n",
                     format_count(p.total), format_count(p.active), format_count(p.matmul_active));
  out << fmt::format("  FLOPs/token   at sequence length {} (training, no recomputation):\n",
                     m.seq_len);
  for (const auto& [c, v] : per) out << fmt::format("    {:<24} {}\n", to_string(c), v);
  out << fmt::format("  source        {}\n", m.source);
}

}  // namespace mfu
