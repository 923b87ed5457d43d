#include "SemaTestSupport.h"

#include "diag/Diagnostics.h"
#include "parse/Parser.h"

#include <sstream>

namespace sonde::test {

const ast::GlobalDecl *Elaborated::global(const std::string &name) const {
  for (const auto &g : script.globals)
    if (g->name == name)
      return g.get();
  return nullptr;
}

const ast::FunctionDecl *Elaborated::function(const std::string &name) const {
  for (const auto &f : script.functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

ast::Type Elaborated::localType(const std::string &name, size_t probe) const {
  if (probe >= script.derived.size())
    return ast::Type::Unknown;
  for (const auto &l : script.derived[probe]->locals)
    if (l->name == name)
      return l->type;
  return ast::Type::Unknown;
}

std::vector<std::string> Elaborated::points() const {
  std::vector<std::string> out;
  for (const auto &p : script.derived)
    out.push_back(p->point->str());
  return out;
}

Elaborated elaborateText(const std::string &user,
                         const std::vector<std::pair<std::string, std::string>> &library,
                         const SemaOptions &opts) {
  Elaborated r;
  std::ostringstream out;
  DiagnosticEngine diags(out);
  ParseOptions popts;
  r.parsed = true;
  r.files.push_back(std::make_unique<SourceFile>("input.probe", user));
  r.parsed &= parseScript(*r.files.back(), popts, diags, r.script);
  for (const auto &[name, text] : library) {
    r.files.push_back(std::make_unique<SourceFile>(name, text, /*lib=*/true));
    r.parsed &= parseScript(*r.files.back(), popts, diags, r.script);
  }
  if (r.parsed)
    r.ok = elaborate(r.script, diags, opts);
  diags.flush();
  r.diagnostics = out.str();
  return r;
}

std::string semaDiagnostics(const std::string &user, const SemaOptions &opts) {
  return elaborateText(user, {}, opts).diagnostics;
}

} // namespace sonde::test
