// Evaluation of one `%( LHS OP RHS` triple (language.md 1, conditionals table).
#include "parse/Literals.h"
#include "parse/Preprocessor.h"

#include "SondeLexer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fnmatch.h>

namespace sonde::parse {

using sonde_antlr::SondeLexer;

namespace {

enum class CmpOp : uint8_t { Lt, Le, Gt, Ge, Eq, Ne, Invalid };

CmpOp comparisonOf(const LexToken &op) {
  switch (op.type) {
  case SondeLexer::LT: return CmpOp::Lt;
  case SondeLexer::LE: return CmpOp::Le;
  case SondeLexer::GT: return CmpOp::Gt;
  case SondeLexer::GE: return CmpOp::Ge;
  case SondeLexer::EQ: return CmpOp::Eq;
  case SondeLexer::NE: return CmpOp::Ne;
  default: return CmpOp::Invalid;
  }
}

template <class T> bool compareValues(const T &l, CmpOp op, const T &r) {
  switch (op) {
  case CmpOp::Lt: return l < r;
  case CmpOp::Le: return l <= r;
  case CmpOp::Gt: return l > r;
  case CmpOp::Ge: return l >= r;
  case CmpOp::Eq: return l == r;
  case CmpOp::Ne: return l != r;
  case CmpOp::Invalid: break;
  }
  return false;
}

// strtoll(s, 0) of the whole string; "" reads as 0, like stap.
std::optional<int64_t> configNumber(const std::string &s) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno == ERANGE || errno == EINVAL || *end != '\0')
    return std::nullopt;
  return v;
}

bool wildcardMatch(const std::string &pattern, const std::string &value) {
  return fnmatch(pattern.c_str(), value.c_str(), FNM_NOESCAPE) == 0;
}

} // namespace

bool Preprocessor::evalTriple(const LexToken &l, const LexToken &op, const LexToken &r,
                              std::optional<LexToken> &error) const {
  auto fail = [&](const LexToken &blame, const std::string &msg) {
    error = errorToken(blame, msg, false, true);
    return false;
  };
  for (const LexToken *t : {&l, &op, &r})
    if (t->error) {
      error = *t;
      return false;
    }
  const CmpOp cmp = comparisonOf(op);
  auto compare = [&](const auto &lv, const auto &rv) {
    if (cmp == CmpOp::Invalid)
      return fail(op, "expected comparison operator");
    return compareValues(lv, cmp, rv);
  };
  // ==/!= only: a wildcard (or plain) match.
  auto equality = [&](bool matched) {
    if (cmp == CmpOp::Eq)
      return matched;
    if (cmp == CmpOp::Ne)
      return !matched;
    return fail(op, "expected '==' or '!='");
  };
  const bool lhsIdent = l.type == SondeLexer::IDENTIFIER;
  const std::string rhs = r.type == SondeLexer::STRING ? decodeString(r.text) : r.text;

  if (lhsIdent && (l.text == "kernel_v" || l.text == "kernel_vr" || l.text == "systemtap_v")) {
    if (r.type != SondeLexer::STRING)
      return fail(r, "expected string literal");
    const std::string &target = l.text == "kernel_v"    ? opts_.kernelVersion
                                : l.text == "kernel_vr" ? opts_.kernelRelease
                                                        : opts_.compatible;
    if (cmp == CmpOp::Invalid)
      return fail(op, "expected comparison operator");
    const bool wildcard = std::strpbrk(rhs.c_str(), "*?[") != nullptr;
    if (wildcard) {
      if (cmp != CmpOp::Eq && cmp != CmpOp::Ne)
        return fail(op, "wildcard not allowed with order comparison operators");
      return equality(wildcardMatch(rhs, target));
    }
    int order = strverscmp(target.c_str(), rhs.c_str());
    return compare(order < 0 ? -1 : order > 0 ? 1 : 0, 0);
  }
  if (lhsIdent && l.text == "systemtap_privilege") {
    if (r.type != SondeLexer::STRING)
      return fail(r, "expected string literal");
    return equality(opts_.privilege == rhs);
  }
  if (lhsIdent && l.text == "guru_mode") {
    if (r.type != SondeLexer::NUMBER)
      return fail(r, "expected number");
    std::optional<int64_t> v = parseNumber(r.text);
    if (!v || (*v != 0 && *v != 1))
      return fail(op, "expected 0 or 1");
    return equality(*v == 0); // guru mode is never on
  }
  if (lhsIdent && (l.text == "arch" || l.text == "runtime")) {
    if (r.type != SondeLexer::STRING)
      return fail(r, "expected string literal");
    return equality(wildcardMatch(rhs, l.text == "arch" ? opts_.arch : opts_.runtime));
  }
  if (lhsIdent && l.text.starts_with("CONFIG_")) {
    auto config = [&](const std::string &name) {
      return opts_.kernelConfig ? opts_.kernelConfig(name) : std::string();
    };
    const std::string value = config(l.text);
    if (r.type == SondeLexer::STRING)
      return equality(wildcardMatch(rhs, value));
    if (r.type == SondeLexer::NUMBER) {
      std::optional<int64_t> lv = configNumber(value);
      if (!lv)
        return fail(l, "Config option value not a number");
      std::optional<int64_t> rv = parseNumber(r.text);
      if (!rv)
        return fail(r, "number invalid or out of range");
      return compare(*lv, *rv);
    }
    if (r.type == SondeLexer::IDENTIFIER && r.text.starts_with("CONFIG_")) {
      const std::string other = config(r.text);
      std::optional<int64_t> lv = configNumber(value), rv = configNumber(other);
      if (lv && rv)
        return compare(*lv, *rv);
      return compare(value, other);
    }
    return fail(r, "expected string, number literal or other CONFIG_... as right side operand");
  }
  if (l.type == SondeLexer::STRING && r.type == SondeLexer::STRING)
    return compare(decodeString(l.text), rhs);
  if (l.type == SondeLexer::NUMBER && r.type == SondeLexer::NUMBER) {
    std::optional<int64_t> lv = parseNumber(l.text), rv = parseNumber(r.text);
    if (!lv)
      return fail(l, "number invalid or out of range");
    if (!rv)
      return fail(r, "number invalid or out of range");
    return compare(*lv, *rv);
  }
  if (l.type == SondeLexer::STRING && r.type == SondeLexer::NUMBER)
    return fail(r, "expected string literal as right value");
  if (l.type == SondeLexer::NUMBER && r.type == SondeLexer::STRING)
    return fail(r, "expected number literal as right value");
  return fail(l, "expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',\n"
                 "             'runtime', 'systemtap_privilege', 'CONFIG_...', or\n"
                 "             comparison between strings or integers");
}

} // namespace sonde::parse
