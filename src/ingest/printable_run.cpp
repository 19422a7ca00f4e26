// Text a log brought into a run, made safe to print (parser.hpp: make_printable).
#include "ingest/parser.hpp"
#include "text.hpp"

namespace mfu::detail {
namespace {

void clean(std::string& s) {
  if (needs_printable(s)) s = printable(s);
}

}  // namespace

void make_printable(Run& run) {
  for (auto& d : run.diagnostics) {
    clean(d.message);
    clean(d.file);
  }
  for (auto& e : run.events) clean(e.detail);
  for (auto& f : run.fields) clean(f);
  for (auto& in : run.inputs) clean(in);
}

}  // namespace mfu::detail
