#include "driver/ProbeListing.h"

#include "ast/Clone.h"
#include "codegen/StockSitePaths.h"
#include "probes/ProbeFamilies.h"
#include "probes/marker/MarkerCatalog.h"
#include "probes/tracepoint/KernelBtf.h"
#include "probes/tracepoint/TracepointCatalog.h"

#include <algorithm>
#include <cstdio>
#include <fnmatch.h>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

namespace sonde {
namespace {

using probes::ArgKind;
using probes::ProbeKind;
using probes::marker::CatalogSite;
using probes::marker::MarkerCatalog;
using probes::marker::MarkerQuery;
using probes::marker::SiteNop;
using probes::tracepoint::TracepointCatalog;
using probes::tracepoint::TracepointMatch;

// What one pattern lists: lines, or the first error (which stops the listing).
struct Listing {
  std::set<std::string> lines; // sorted and each once, as stap prints them
  std::string error;
  // -L: the alias points matched (`syscall.openat`), given their variables at the end.
  std::set<std::pair<std::string, std::string>> aliasPoints; // (point, suffix)
  codegen::StockSitePaths stockPaths;                        // -L: each stock site's path
  explicit Listing(bool stockJumpPath) : stockPaths(stockJumpPath) {}
};

std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string suffixOf(const ast::ProbePoint &p) {
  return p.sufficient ? "!" : p.optional ? "?" : "";
}

bool hasWildcard(const std::string &name) { return name.find_first_of("*?[") != std::string::npos; }

// `$arg1:long ... /* patched at 0x1139, semaphore 0x4010: -4@%eax 8@%rsi */`: the
// variables as stap prints them, then how the site attaches and what the note
// says. A stock 1-byte site says its path: `jump (N bytes displaced)`, or
// `trap` with the reason at the end.
std::string markerVariables(const CatalogSite &s, codegen::StockSitePaths &paths) {
  std::string text;
  if (s.site.argError.empty())
    for (size_t i = 1; i <= s.site.args.size(); ++i)
      text += " $arg" + std::to_string(i) + ":long";
  std::string trapReason;
  switch (s.site.nop) {
  case SiteNop::FiveByte: text += " /* patched"; break;
  case SiteNop::OneByte:
    if (codegen::StockSitePath path = paths.pathFor(s.binary, s.site.pc); path.jump) {
      text += " /* jump (" + std::to_string(path.jump->length) + " bytes displaced)";
    } else {
      text += " /* trap";
      trapReason = path.trapReason;
    }
    break;
  case SiteNop::None: text += " /* unpatchable"; break;
  }
  text += " at " + hex(s.site.pc);
  if (s.site.semaphore != 0)
    text += ", semaphore " + hex(s.site.semaphore);
  if (!s.site.argError.empty())
    text += ": bad arguments: " + s.site.argError;
  else if (!s.site.rawArgs.empty())
    text += ": " + s.site.rawArgs;
  if (!trapReason.empty())
    text += "; trap: " + trapReason;
  return text + " */";
}

// process("EXE")[.library("LIB")][.provider("P")].mark("NAME"): one line per distinct
// marker with -l (the provider only when written or when two providers of one object
// share the name), one per site with -L (always with the provider). A process
// glob lists each ELF file it matches, as pass 2 resolves it.
void listMarkers(const ast::ProbePoint &p, const ListingRequest &request, Listing &listing) {
  MarkerQuery q;
  bool providerWritten = false;
  for (const auto &c : p.components) {
    auto *arg = dynamic_cast<const ast::StringLit *>(c.arg.get());
    std::string value = arg ? arg->value : "";
    if (auto *pid = dynamic_cast<const ast::NumberLit *>(c.arg.get()); pid && c.name == "process") {
      std::optional<std::string> exe =
          MarkerCatalog::executableOfProcess(pid->value, listing.error);
      if (!exe)
        return;
      value = *exe;
    }
    if (c.name == "process")
      q.process = value;
    else if (c.name == "library")
      q.library = value;
    else if (c.name == "provider") {
      q.provider = value;
      providerWritten = true;
    } else if (c.name == "mark")
      q.name = MarkerCatalog::scriptMarkerName(value);
  }
  q.targetCommand = MarkerCatalog::commandProgram(request.targetCommand);
  std::vector<std::string> programs{q.process};
  const bool glob = MarkerCatalog::isProcessGlob(q.process);
  if (glob) {
    std::optional<std::vector<std::string>> files =
        MarkerCatalog::expandProcessGlob(q.process, listing.error);
    if (!files)
      return;
    programs = std::move(*files);
  }
  for (const std::string &program : programs) {
    q.process = program;
    probes::marker::MarkerQueryResult found = MarkerCatalog().find(q);
    if (!found.error.empty()) {
      if (glob) // a file the glob caught that cannot be read lists nothing
        continue;
      listing.error = found.error;
      return;
    }
    const std::string &executable = found.program;
    std::map<std::pair<std::string, std::string>, std::set<std::string>> providersOf;
    for (const CatalogSite &s : found.sites)
      providersOf[{s.binary, s.site.name}].insert(s.site.provider);
    for (const CatalogSite &s : found.sites) {
      std::string line = "process(" + ast::quoteString(executable) + ")";
      if (s.binary != executable)
        line += ".library(" + ast::quoteString(s.binary) + ")";
      if (request.withVariables || providerWritten ||
          providersOf[{s.binary, s.site.name}].size() > 1)
        line += ".provider(" + ast::quoteString(s.site.provider) + ")";
      line += ".mark(" + ast::quoteString(s.site.name) + ")" + suffixOf(p);
      if (request.withVariables)
        line += markerVariables(s, listing.stockPaths);
      listing.lines.insert(line);
    }
  }
}

// ` $name:type ...`: the fields `$name` reads in a tracepoint's handler, with
// their C types, then the C arguments (stap's form, `$prev->pid`) the fields do
// not name.
std::string tracepointVariables(const probes::tracepoint::TracepointFormat &format) {
  std::string text;
  for (const probes::tracepoint::TracepointField &f : format.fields)
    if (!f.common)
      text += " $" + f.name + ":" + f.type;
  std::string ignored;
  if (const auto *btf = probes::tracepoint::KernelBtf::running(&ignored))
    if (auto args = btf->arguments(format.name))
      for (const probes::tracepoint::TracepointArgument &a : *args)
        if (!probes::tracepoint::findTracepointField(format, a.name))
          text += " $" + a.name + ":" + a.type;
  return text;
}

// kernel.trace("PATTERN"): one line per tracepoint of the running kernel the
// pattern names; -L adds the fields `$name` reads, with their C types.
void listTracepoints(const ast::ProbePoint &p, const ListingRequest &request, Listing &listing) {
  const ast::StringLit *arg = nullptr;
  for (const auto &c : p.components)
    if (c.name == "trace")
      arg = dynamic_cast<const ast::StringLit *>(c.arg.get());
  if (!arg) {
    listing.error = "kernel.trace needs a \"system:event\" string: " + p.str();
    return;
  }
  std::string error;
  std::optional<TracepointCatalog> catalog = TracepointCatalog::open(&error);
  if (!catalog) {
    listing.error = error;
    return;
  }
  TracepointMatch found = catalog->find(arg->value);
  if (!found.error.empty()) {
    listing.error = found.error;
    return;
  }
  for (const std::string &name : found.names) {
    std::string line = "kernel.trace(" + ast::quoteString(name) + ")" + suffixOf(p);
    if (request.withVariables) {
      const probes::tracepoint::TracepointFormat *format = catalog->format(name, &error);
      if (!format) {
        listing.error = error;
        return;
      }
      line += tracepointVariables(*format);
    }
    listing.lines.insert(line);
  }
}

// A concrete point of a family other than markers: itself, if its arguments are
// valid; process("GLOB").begin and the like, once per ELF file the glob matches.
void listConcrete(const ast::ProbePoint &p, const probes::ProbeFamily &family, Listing &listing) {
  if (!family.supported()) {
    listing.error = "probe point not supported: " + p.str();
    return;
  }
  if (std::string why = family.validate ? family.validate(p) : ""; !why.empty()) {
    listing.error = p.str() + ": " + why;
    return;
  }
  const auto *path = p.components.empty()
                         ? nullptr
                         : dynamic_cast<const ast::StringLit *>(p.components[0].arg.get());
  if (!path || p.components[0].name != "process" || !MarkerCatalog::isProcessGlob(path->value)) {
    listing.lines.insert(p.str());
    return;
  }
  std::optional<std::vector<std::string>> files =
      MarkerCatalog::expandProcessGlob(path->value, listing.error);
  for (const std::string &file : files.value_or(std::vector<std::string>{})) {
    std::unique_ptr<ast::ProbePoint> concrete = ast::cloneProbePoint(p);
    static_cast<ast::StringLit &>(*concrete->components[0].arg).value = file;
    listing.lines.insert(concrete->str());
  }
}

// Whether pattern component `c` (a name glob) matches a component named `name`
// taking `arg`.
bool componentMatches(const ast::ProbePointComponent &c, std::string_view name, ArgKind arg) {
  return fnmatch(c.name.c_str(), std::string(name).c_str(), 0) == 0 && probes::argKindOf(c) == arg;
}

// The aliases a point names (`timer.profile` from the stdlib), by their first name.
void listAliases(const ast::ProbePoint &p, const ListingRequest &request, const ast::Script &script,
                 Listing &listing) {
  for (const auto &alias : script.aliases)
    for (const auto &name : alias->names) {
      bool match = name->components.size() == p.components.size();
      for (size_t i = 0; match && i < p.components.size(); ++i)
        match = componentMatches(p.components[i], name->components[i].name,
                                 probes::argKindOf(name->components[i]));
      if (!match)
        continue;
      if (request.withVariables)
        listing.aliasPoints.insert({name->str(), suffixOf(p)});
      else
        listing.lines.insert(name->str() + suffixOf(p));
    }
}

// -L on aliases: each point with its locals as stap prints them (`name:string`,
// in the order the alias body declares them), then the `$` variables of what it
// expands to. The points are elaborated together, each optional, in a frontend
// of their own: one whose expansion fails here (a tracepoint this kernel lacks)
// is listed without variables.
void listAliasVariables(const std::set<std::pair<std::string, std::string>> &points,
                        FrontendOptions options, std::set<std::string> &lines) {
  std::vector<std::pair<std::string, std::string>> order(points.begin(), points.end());
  std::string script = "probe ";
  for (size_t i = 0; i < order.size(); ++i)
    script += (i ? ", " : "") + order[i].first + "?";
  script += " {}";
  options.sema.unoptimized = true; // keep every local the alias sets
  std::ostringstream ignored;
  Frontend fe(ignored, std::move(options));
  std::map<const ast::ProbePoint *, size_t> indexOf;
  std::vector<std::vector<std::string>> variables(order.size());
  // The user's probe is the first; the tapsets' own probes come after it.
  if (fe.parseUserScript("<input>", script) && fe.parseLibraries() && fe.elaborate()) {
    const auto &written = fe.script().probes.front()->points;
    for (size_t i = 0; i < written.size() && i < order.size(); ++i)
      indexOf[written[i].get()] = i;
    for (const auto &d : fe.script().derived) {
      auto at = indexOf.find(d->originPoint);
      if (at == indexOf.end())
        continue;
      std::vector<std::string> &vars = variables[at->second];
      auto add = [&](std::string v) {
        if (std::find(vars.begin(), vars.end(), v) == vars.end())
          vars.push_back(std::move(v));
      };
      for (const auto &local : d->locals)
        if (!local->isParam)
          add(" " + local->name + ":" + ast::typeName(local->type));
      if (d->tracepoint)
        add(tracepointVariables(d->tracepoint->format));
      if (d->markerSite && d->markerSite->site.argError.empty())
        for (size_t n = 1; n <= d->markerSite->site.args.size(); ++n)
          add(" $arg" + std::to_string(n) + ":long");
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    std::string line = order[i].first + order[i].second;
    for (const std::string &v : variables[i])
      line += v;
    lines.insert(line);
  }
}

// A point with wildcards in component names (`process.*`, `timer.profile.*`): every
// family shape it matches, with its own arguments, that is valid. Markers and
// tracepoints need discovery and are not expanded this way.
void listWildcard(const ast::ProbePoint &p, Listing &listing) {
  for (const probes::ProbeFamily &family : probes::families()) {
    if (!family.supported() || family.kind == ProbeKind::Marker ||
        family.kind == ProbeKind::KernelTrace || family.pattern.size() != p.components.size())
      continue;
    bool match = true;
    for (size_t i = 0; match && i < p.components.size(); ++i)
      match = componentMatches(p.components[i], family.pattern[i].name, family.pattern[i].arg);
    if (!match)
      continue;
    std::unique_ptr<ast::ProbePoint> concrete = ast::cloneProbePoint(p);
    for (size_t i = 0; i < p.components.size(); ++i)
      concrete->components[i].name = std::string(family.pattern[i].name);
    if (!family.validate || family.validate(*concrete).empty())
      listing.lines.insert(concrete->str());
  }
}

void listPoint(const ast::ProbePoint &p, const ListingRequest &request, Frontend &fe,
               Listing &listing) {
  bool wildcard = std::any_of(p.components.begin(), p.components.end(),
                              [](const auto &c) { return hasWildcard(c.name); });
  if (!wildcard)
    if (const probes::ProbeFamily *family = probes::familyOf(p)) {
      if (family->kind == ProbeKind::Marker)
        listMarkers(p, request, listing);
      else if (family->kind == ProbeKind::KernelTrace)
        listTracepoints(p, request, listing);
      else
        listConcrete(p, *family, listing);
      return;
    }
  if (wildcard)
    listWildcard(p, listing);
  listAliases(p, request, fe.script(), listing);
}

} // namespace

int listProbePoints(const ListingRequest &request, FrontendOptions options, std::ostream &out,
                    std::ostream &err) {
  const char *option = request.withVariables ? "-L" : "-l";
  const FrontendOptions aliasOptions = options;
  Frontend fe(err, std::move(options));
  // Parsed as stap does: as the points of an empty probe.
  if (!fe.parseUserScript("<input>", "probe " + request.pattern + " {}") ||
      fe.script().probes.size() != 1 || fe.script().order.size() != 1) {
    err << "sonde: " << option << ": not a probe point: " << request.pattern << "\n";
    return 1;
  }
  // Listing may name aliases by glob (`-l '*'`): every tapset is read.
  if (!fe.parseLibraries(Frontend::LibraryParse::All)) {
    err << "sonde: " << option << ": the tapset library does not parse\n";
    return 1;
  }
  Listing listing(request.stockJumpPath);
  for (const auto &point : fe.script().probes.front()->points) {
    listPoint(*point, request, fe, listing);
    if (!listing.error.empty()) {
      err << "sonde: " << option << ": " << listing.error << "\n";
      return 1;
    }
  }
  if (!listing.aliasPoints.empty())
    listAliasVariables(listing.aliasPoints, aliasOptions, listing.lines);
  for (const std::string &line : listing.lines)
    out << line << "\n";
  return listing.lines.empty() ? 1 : 0;
}

} // namespace sonde
