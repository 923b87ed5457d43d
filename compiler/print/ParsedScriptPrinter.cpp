// -p1: the parsed script as source, declarations in the order they were written.
#include "print/ScriptPrinter.h"
#include "print/SourceWriter.h"

#include <ostream>

namespace sonde {

using namespace ast;

namespace {

class ParsedScriptPrinter {
public:
  explicit ParsedScriptPrinter(std::ostream &out) : out_(out), w_(out) {}

  void print(const Script &script) {
    out_ << "# parse tree dump\n";
    auto visitDecl = [&](Script::DeclKind kind, size_t i) {
      switch (kind) {
      case Script::DeclKind::Global: global(*script.globals[i]); break;
      case Script::DeclKind::Function: function(*script.functions[i]); break;
      case Script::DeclKind::Probe: probe(*script.probes[i]); break;
      case Script::DeclKind::Alias: alias(*script.aliases[i]); break;
      }
    };
    size_t total = script.globals.size() + script.functions.size() + script.probes.size() +
                   script.aliases.size();
    if (script.order.size() == total) {
      for (auto [kind, i] : script.order)
        visitDecl(kind, i);
      return;
    }
    // A script assembled without a declaration order (by hand, in tests).
    for (size_t i = 0; i < script.globals.size(); ++i)
      visitDecl(Script::DeclKind::Global, i);
    for (size_t i = 0; i < script.functions.size(); ++i)
      visitDecl(Script::DeclKind::Function, i);
    for (size_t i = 0; i < script.aliases.size(); ++i)
      visitDecl(Script::DeclKind::Alias, i);
    for (size_t i = 0; i < script.probes.size(); ++i)
      visitDecl(Script::DeclKind::Probe, i);
  }

private:
  // Names the file each run of declarations came from, like stap -p1.
  void fileHeader(const SourceFile *file) {
    if (file && file != currentFile_)
      out_ << "# file " << file->name << '\n';
    currentFile_ = file;
  }

  void global(const GlobalDecl &g) {
    fileHeader(g.file);
    out_ << (g.isPrivate ? "private global " : "global ") << g.name;
    if (g.wrap)
      out_ << '%';
    if (g.maxEntries) {
      out_ << '[';
      w_.literalNumber(*g.maxEntries);
      out_ << ']';
    }
    if (g.init) {
      out_ << " = ";
      w_.literal(*g.init);
    }
    out_ << '\n';
  }

  void function(const FunctionDecl &f) {
    fileHeader(f.file);
    out_ << (f.isPrivate ? "private function " : "function ") << f.name;
    if (f.declaredReturn != Type::Unknown)
      out_ << ':' << typeName(f.declaredReturn);
    out_ << '(';
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i)
        out_ << ", ";
      out_ << f.params[i].name;
      if (f.params[i].declared != Type::Unknown)
        out_ << ':' << typeName(f.params[i].declared);
    }
    out_ << ')';
    if (f.priority) {
      out_ << ':';
      w_.literalNumber(*f.priority);
    }
    out_ << ' ';
    w_.block(*f.body);
    out_ << '\n';
  }

  void pointList(const std::vector<std::unique_ptr<ProbePoint>> &points) {
    for (size_t i = 0; i < points.size(); ++i) {
      if (i)
        out_ << ", ";
      w_.probePoint(*points[i]);
    }
  }

  void probe(const ProbeDecl &p) {
    fileHeader(p.file);
    out_ << "probe ";
    pointList(p.points);
    out_ << ' ';
    w_.block(*p.body);
    out_ << '\n';
  }

  void alias(const AliasDecl &a) {
    fileHeader(a.file);
    out_ << "probe ";
    for (const auto &name : a.names) {
      w_.probePoint(*name);
      out_ << (a.epilogueStyle ? " += " : " = ");
    }
    pointList(a.points);
    out_ << ' ';
    w_.block(*a.body);
    if (a.epilogue) {
      out_ << ", ";
      w_.block(*a.epilogue);
    }
    out_ << '\n';
  }

  std::ostream &out_;
  print::SourceWriter w_;
  const SourceFile *currentFile_ = nullptr;
};

} // namespace

void printParsedScript(const Script &script, std::ostream &out) {
  ParsedScriptPrinter(out).print(script);
}

} // namespace sonde
