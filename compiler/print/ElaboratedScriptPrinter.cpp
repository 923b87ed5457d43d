// -p2: what elaboration kept, with inferred types, in stap -p2's layout:
//
//   # globals
//   counts[100]:long [long, string]
//   # functions
//   add:long (a:long, b:long)
//     # locals
//     tmp:long
//   # probes
//   timer.s(1) /* <- myalias = timer.s(1) <- myalias */
//     # locals
//     x:long
//
// With verbose, each function and probe is followed by its body.
#include "print/ScriptPrinter.h"
#include "print/SourceWriter.h"

#include <ostream>

namespace sonde {

using namespace ast;

namespace {

class ElaboratedScriptPrinter {
public:
  ElaboratedScriptPrinter(std::ostream &out, bool verbose)
      : out_(out), verbose_(verbose), w_(out, print::SourceStyle{.annotateTypes = true}) {}

  void print(const Script &script) {
    if (!script.globals.empty())
      out_ << "# globals\n";
    for (const auto &g : script.globals)
      global(*g);
    if (!script.functions.empty())
      out_ << "# functions\n";
    for (const auto &f : script.functions)
      function(*f);
    if (!script.derived.empty())
      out_ << "# probes\n";
    for (const auto &d : script.derived)
      derived(*d);
  }

private:
  void global(const GlobalDecl &g) {
    out_ << g.name;
    if (g.wrap)
      out_ << '%';
    if (g.maxEntries)
      out_ << '[' << *g.maxEntries << ']';
    out_ << ':' << typeName(g.type);
    if (g.arity > 0) {
      out_ << " [";
      for (int i = 0; i < g.arity; ++i) {
        if (i)
          out_ << ", ";
        out_ << typeName(i < static_cast<int>(g.indexTypes.size()) ? g.indexTypes[i]
                                                                   : Type::Unknown);
      }
      out_ << ']';
    }
    out_ << '\n';
  }

  void locals(const std::vector<std::unique_ptr<LocalVar>> &vars) {
    bool any = false;
    for (const auto &v : vars) {
      if (v->isParam)
        continue;
      if (!any)
        out_ << "  # locals\n";
      any = true;
      out_ << "  " << v->name << ':' << typeName(v->type) << '\n';
    }
  }

  // The type of parameter i: inferred when sema recorded it, else as declared.
  static Type paramType(const FunctionDecl &f, size_t i) {
    for (const auto &v : f.locals)
      if (v->isParam && v->name == f.params[i].name)
        return v->type;
    return f.params[i].declared;
  }

  void body(const Block &b) {
    w_.block(b);
    out_ << '\n';
  }

  void function(const FunctionDecl &f) {
    out_ << f.name << ':' << typeName(f.returnType) << " (";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i)
        out_ << ", ";
      out_ << f.params[i].name << ':' << typeName(paramType(f, i));
    }
    out_ << ")\n";
    locals(f.locals);
    if (verbose_ && f.body)
      body(*f.body);
  }

  void pointList(const std::vector<std::unique_ptr<ProbePoint>> &points, const char *sep) {
    for (size_t i = 0; i < points.size(); ++i) {
      if (i)
        out_ << sep;
      w_.probePoint(*points[i]);
    }
  }

  // stap's probe_alias::printsig: "a1 = a2 = pp1, pp2" (or "+=").
  void aliasSignature(const AliasDecl &a) {
    for (size_t i = 0; i < a.names.size(); ++i) {
      if (i)
        out_ << " = ";
      w_.probePoint(*a.names[i]);
    }
    out_ << (a.epilogueStyle ? " += " : " = ");
    pointList(a.points, ", ");
  }

  void derived(const DerivedProbe &d) {
    // A derived probe is concrete: optionality belongs to the spelling it came from.
    w_.probePoint(*d.point, /*withOptionality=*/false);
    if (d.condition && !d.point->condition) {
      out_ << " if (";
      w_.expr(*d.condition);
      out_ << ')';
    }
    // The derivation, innermost alias first, ending with the user's probe.
    out_ << " /* <- ";
    for (auto it = d.aliasChain.rbegin(); it != d.aliasChain.rend(); ++it) {
      aliasSignature(**it);
      out_ << " <- ";
    }
    if (d.origin)
      pointList(d.origin->points, ",");
    else if (d.originPoint)
      w_.probePoint(*d.originPoint);
    out_ << " */\n";
    locals(d.locals);
    if (verbose_ && d.body)
      body(*d.body);
  }

  std::ostream &out_;
  bool verbose_;
  print::SourceWriter w_;
};

} // namespace

void printElaboratedScript(const Script &script, std::ostream &out, bool verbose) {
  ElaboratedScriptPrinter(out, verbose).print(script);
}

} // namespace sonde
