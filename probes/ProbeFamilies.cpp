#include "probes/ProbeFamilies.h"

#include "compiler/diag/Diagnostics.h"
#include "probes/marker/MarkerCatalog.h"
#include "probes/tracepoint/KernelBtf.h"
#include "probes/tracepoint/TracepointFormat.h"

namespace sonde::probes {

namespace {

using A = ArgKind;
using K = ProbeKind;

const ast::ProbePointComponent *component(const ast::ProbePoint &p, std::string_view name) {
  for (const auto &c : p.components)
    if (c.name == name)
      return &c;
  return nullptr;
}

// hrtimer intervals must lie within [100 us, 1 day], expressed in the unit used.
struct TimerUnit {
  std::string_view name;
  int64_t min, max;
  int64_t ns; // one unit in nanoseconds
};
constexpr TimerUnit kTimerUnits[] = {
    {"s", 1, 86400, 1000000000},       {"sec", 1, 86400, 1000000000},
    {"ms", 1, 86400000, 1000000},      {"msec", 1, 86400000, 1000000},
    {"us", 100, 86400000000, 1000},    {"usec", 100, 86400000000, 1000},
    {"ns", 100000, 86400000000000, 1}, {"nsec", 100000, 86400000000000, 1},
};

std::string validateTimer(const ast::ProbePoint &p) {
  if (p.components.size() < 2)
    return "";
  for (const auto &u : kTimerUnits) {
    if (p.components[1].name != u.name)
      continue;
    int64_t interval = numberArg(p, u.name, 0);
    if (interval < u.min || interval > u.max)
      return "interval value out of range (" + std::to_string(u.min) + ", " +
             std::to_string(u.max) + ")";
    int64_t rand = numberArg(p, "randomize", 0);
    if (rand < 0 || rand > interval)
      return "randomization value out of range";
  }
  return "";
}

std::string validateHz(const ast::ProbePoint &p) {
  return numberArg(p, "hz", 0) <= 0 ? "frequency must be greater than 0" : "";
}

std::string validateJiffies(const ast::ProbePoint &p) {
  int64_t interval = numberArg(p, "jiffies", 0);
  if (interval <= 0 || interval > 1000000)
    return "invalid interval for jiffies timer";
  int64_t rand = numberArg(p, "randomize", 0);
  if (rand < 0 || rand > interval)
    return "invalid randomize for jiffies timer";
  return "";
}

std::vector<ProbeFamily> buildFamilies() {
  std::vector<ProbeFamily> f = {
      {K::Begin, {{"begin"}}},
      {K::Begin, {{"begin", A::Number}}},
      {K::End, {{"end"}}},
      {K::End, {{"end", A::Number}}},
      {K::Error, {{"error"}}},
      {K::Error, {{"error", A::Number}}},
      {K::Never, {{"never"}}},
      {K::TimerHz, {{"timer"}, {"hz", A::Number}}, validateHz},
      {K::TimerJiffies, {{"timer"}, {"jiffies", A::Number}}, validateJiffies},
      {K::TimerJiffies,
       {{"timer"}, {"jiffies", A::Number}, {"randomize", A::Number}},
       validateJiffies},
      {K::TimerProfileTick, {{"timer"}, {"profile"}, {"tick"}}},
      {K::KernelTrace, {{"kernel"}, {"trace", A::String}}},
  };
  for (const auto &u : kTimerUnits) {
    f.push_back({K::Timer, {{"timer"}, {u.name, A::Number}}, validateTimer});
    f.push_back(
        {K::Timer, {{"timer"}, {u.name, A::Number}, {"randomize", A::Number}}, validateTimer});
  }

  // process, process("PATH"), process(PID): markers, lifecycle, and the DWARF /
  // syscall families we do not support yet.
  const PatternComponent processes[] = {
      {"process"}, {"process", A::String}, {"process", A::Number}};
  for (const auto &proc : processes) {
    f.push_back({K::Marker, {proc, {"mark", A::String}}});
    f.push_back({K::Marker, {proc, {"provider", A::String}, {"mark", A::String}}});
    f.push_back({K::Marker, {proc, {"library", A::String}, {"mark", A::String}}});
    f.push_back({K::ProcessBegin, {proc, {"begin"}}});
    f.push_back({K::ProcessEnd, {proc, {"end"}}});
    f.push_back({K::ThreadBegin, {proc, {"thread"}, {"begin"}}});
    f.push_back({K::ThreadEnd, {proc, {"thread"}, {"end"}}});
    for (const PatternComponent &dwarf :
         {PatternComponent{"function", A::String}, PatternComponent{"function", A::Number},
          PatternComponent{"statement", A::String}, PatternComponent{"statement", A::Number},
          PatternComponent{"plt"}, PatternComponent{"plt", A::String}}) {
      f.push_back({K::Unsupported, {proc, dwarf}});
      f.push_back({K::Unsupported, {proc, {"library", A::String}, dwarf}});
    }
    f.push_back({K::Unsupported, {proc, {"syscall"}}});
    f.push_back({K::Unsupported, {proc, {"insn"}}});
  }

  for (const PatternComponent &kernel :
       {PatternComponent{"function", A::String}, PatternComponent{"function", A::Number},
        PatternComponent{"statement", A::String}, PatternComponent{"statement", A::Number},
        PatternComponent{"data", A::String}, PatternComponent{"data", A::Number}})
    f.push_back({K::Unsupported, {{"kernel"}, kernel}});
  for (const PatternComponent &top :
       {PatternComponent{"module", A::String}, PatternComponent{"kprobe"},
        PatternComponent{"procfs"}, PatternComponent{"procfs", A::String}, PatternComponent{"perf"},
        PatternComponent{"netfilter"}, PatternComponent{"java", A::String},
        PatternComponent{"python2"}, PatternComponent{"python3"}})
    f.push_back({K::Unsupported, {top}});
  return f;
}

bool isArgN(std::string_view name) {
  // $arg1 ... $arg12
  if (name.substr(0, 4) != "$arg" || name.size() < 5 || name.size() > 6)
    return false;
  int n = 0;
  for (char c : name.substr(4)) {
    if (c < '0' || c > '9')
      return false;
    n = n * 10 + (c - '0');
  }
  return n >= 1 && n <= 12;
}

} // namespace

int64_t numberArg(const ast::ProbePoint &p, std::string_view name, int64_t fallback) {
  const auto *c = component(p, name);
  if (!c)
    return fallback;
  if (const auto *n = dynamic_cast<const ast::NumberLit *>(c->arg.get()))
    return n->value;
  return fallback;
}

int64_t timerUnitNs(std::string_view unit) {
  for (const auto &u : kTimerUnits)
    if (u.name == unit)
      return u.ns;
  return 0;
}

bool ProbeFamily::hasContextVariables() const {
  return kind == K::Marker || kind == K::KernelTrace;
}

const std::vector<ProbeFamily> &families() {
  static const std::vector<ProbeFamily> table = buildFamilies();
  return table;
}

ArgKind argKindOf(const ast::ProbePointComponent &c) {
  if (!c.arg)
    return A::None;
  if (dynamic_cast<const ast::StringLit *>(c.arg.get()))
    return A::String;
  return A::Number;
}

const ProbeFamily *familyOf(const ast::ProbePoint &point) {
  for (const auto &fam : families()) {
    size_t n = fam.pattern.size();
    if (fam.supported() ? point.components.size() != n : point.components.size() < n)
      continue;
    bool match = true;
    for (size_t i = 0; i < n && match; ++i)
      match = point.components[i].name == fam.pattern[i].name &&
              argKindOf(point.components[i]) == fam.pattern[i].arg;
    if (match)
      return &fam;
  }
  return nullptr;
}

namespace {

// The one name much closer to `name` than any other, or "": a misspelling.
std::string obviousName(const std::string &name, const std::vector<std::string> &names) {
  constexpr unsigned kObvious = 4; // two edits inside the name (stap's weights)
  std::string best;
  unsigned bestScore = ~0u, second = ~0u;
  for (const std::string &n : names) {
    unsigned score = suggestionScore(name, n);
    if (score < bestScore) {
      second = bestScore;
      bestScore = score;
      best = n;
    } else if (score < second) {
      second = score;
    }
  }
  return bestScore <= kObvious && bestScore < second ? best : "";
}

// `$field` of a tracepoint: its own format fields (common_* ones included, as
// stap), integers and pointers as longs, strings as strings; else one of its C
// arguments (TP_PROTO) through the kernel's BTF, with `->member` and `[N]`.
ContextVariable tracepointField(const tracepoint::ResolvedTracepoint &tp,
                                const ast::TargetSymbol &sym) {
  using tracepoint::TracepointFieldKind;
  const tracepoint::TracepointField *f =
      sym.components.empty() && !sym.addressOf
          ? tracepoint::findTracepointField(tp.format, sym.name.substr(1))
          : nullptr;
  if (f) {
    switch (f->kind) {
    case TracepointFieldKind::Integer:
    case TracepointFieldKind::Pointer:
      return {true, sym.prettyDepth > 0 ? ast::Type::String : ast::Type::Long, {}};
    case TracepointFieldKind::CharArray:
    case TracepointFieldKind::DynamicString: return {true, ast::Type::String, {}};
    default:
      return {false, ast::Type::Long,
              "tracepoint variable '" + sym.name + "' has type " + f->type +
                  ", which cannot be read as a value"};
    }
  }
  std::string why;
  const tracepoint::KernelBtf *btf = tracepoint::KernelBtf::running(&why);
  // The C arguments, where BTF has them: not for syscalls:* events, whose
  // records the system call tracer fills without a TP_PROTO of their own.
  std::optional<std::vector<tracepoint::TracepointArgument>> args;
  if (btf)
    args = btf->arguments(tp.event);
  bool isField = tracepoint::findTracepointField(tp.format, sym.name.substr(1)) != nullptr;
  if (btf && (args || isField)) {
    if (auto access = btf->resolve(tp.event, sym, &why))
      return {true,
              access->result == tracepoint::BtfAccess::Result::String ? ast::Type::String
                                                                      : ast::Type::Long,
              {}};
    if (why.rfind("unable to find tracepoint variable", 0) != 0)
      return {false, ast::Type::Long, why};
  }
  std::vector<std::string> names;
  for (const tracepoint::TracepointField &field : tp.format.fields)
    if (!field.common)
      names.push_back(field.name);
  if (args)
    for (const tracepoint::TracepointArgument &a : *args)
      if (!tracepoint::findTracepointField(tp.format, a.name))
        names.push_back(a.name);
  std::string alternatives;
  for (const std::string &n : names)
    alternatives += (alternatives.empty() ? "$" : ", $") + n;
  std::string guess = obviousName(sym.name.substr(1), names);
  return {false, ast::Type::Long,
          "unable to find tracepoint variable '" + sym.name + "'" +
              (alternatives.empty() ? "" : " (alternatives: " + alternatives + ")") +
              (guess.empty() ? "" : "; did you mean '$" + guess + "'?")};
}

} // namespace

ContextVariable contextVariable(const ProbeFamily *family, const ast::ProbePoint *point,
                                const ResolvedPoint &resolved, const ast::TargetSymbol &sym) {
  (void)point;
  const marker::CatalogSite *site = resolved.site;
  if (!family || !family->hasContextVariables())
    return {};
  const std::string &name = sym.name;
  bool pretty = sym.prettyDepth > 0;
  if (family->kind == K::Marker) {
    if (name == "$$name" || name == "$$provider" || name == "$$vars" || name == "$$parms")
      return {true, ast::Type::String, {}};
    if (!isArgN(name))
      return {};
    ast::Type type = pretty ? ast::Type::String : ast::Type::Long;
    if (!site)
      return {true, type, {}};
    if (!site->site.argError.empty())
      return {false, type,
              "cannot read the arguments of marker " + site->site.name + ": " +
                  site->site.argError};
    size_t n = std::stoul(name.substr(4));
    if (n > site->site.args.size())
      return {false, type,
              "invalid marker argument number " + std::to_string(n) + " (" + site->site.name +
                  " has " + std::to_string(site->site.args.size()) + ")"};
    return {true, type, {}};
  }
  if (name == "$$name" || name == "$$system" || name == "$$vars" || name == "$$parms")
    return {true, ast::Type::String, {}};
  if (name.rfind("$$", 0) == 0)
    return {};
  // Before pass 2 resolved the tracepoint (a pattern), any `$field` may exist.
  if (!resolved.tracepoint)
    return {true, pretty ? ast::Type::String : ast::Type::Long, {}};
  return tracepointField(*resolved.tracepoint, sym);
}

std::string contextVariableWriteError(const ProbeFamily *family, const ast::TargetSymbol &sym) {
  if (family && family->kind == K::KernelTrace)
    return "write to tracepoint variable '" + sym.name + "' not permitted; need stap -g";
  return "write to marker parameter '" + sym.name + "' not permitted";
}

} // namespace sonde::probes
