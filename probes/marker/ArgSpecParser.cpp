#include "probes/marker/ArgSpecParser.h"

#include <cctype>
#include <charconv>
#include <limits>

namespace sonde::probes::marker {
namespace {

bool isSymbolStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool isSymbolChar(char c) {
  return isSymbolStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

// A cursor over one spec; every failure records why and returns false/nullopt.
class SpecScanner {
public:
  explicit SpecScanner(std::string_view text) : text_(text) {}

  std::optional<ArgSpec> run() {
    ArgSpec spec;
    spec.text = std::string(text_);
    if (text_.empty())
      return fail("empty spec");
    if (!parseSize(spec))
      return std::nullopt;
    std::optional<Operand> operand = parseOperand();
    if (!operand)
      return std::nullopt;
    if (pos_ != text_.size())
      return fail("unexpected '" + std::string(text_.substr(pos_)) + "' after the operand");
    spec.operand = std::move(*operand);
    return spec;
  }

  const std::string &why() const { return why_; }

private:
  std::nullopt_t fail(std::string why) {
    if (why_.empty())
      why_ = std::move(why);
    return std::nullopt;
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  bool accept(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }

  // "[-]N@" with N in 1, 2, 4, 8; a spec with no size prefix is the old form, read
  // as a signed 8-byte value as systemtap does.
  bool parseSize(ArgSpec &spec) {
    size_t at = text_.find('@');
    if (at == std::string_view::npos) {
      spec.sizeGiven = false;
      return true;
    }
    std::string_view size = text_.substr(0, at);
    spec.isSigned = !size.empty() && size.front() == '-';
    if (spec.isSigned)
      size.remove_prefix(1);
    if (size != "1" && size != "2" && size != "4" && size != "8") {
      fail("size '" + std::string(text_.substr(0, at)) + "' is not one of 1, 2, 4, 8 (or negated)");
      return false;
    }
    spec.size = static_cast<uint8_t>(size.front() - '0');
    pos_ = at + 1;
    return true;
  }

  std::optional<Operand> parseOperand() {
    if (atEnd())
      return fail("missing operand after '@'");
    if (accept('%')) {
      std::optional<X86Register> reg = parseRegisterName();
      if (!reg)
        return std::nullopt;
      if (reg->dwarfNumber == kDwarfRip)
        return fail("%rip is only valid as a memory base");
      return Operand{RegisterOperand{*reg}};
    }
    if (accept('$')) {
      ImmediateOperand imm;
      if (!parseDisplacement(imm.value, imm.symbol))
        return std::nullopt;
      return Operand{std::move(imm)};
    }
    return parseMemory();
  }

  std::optional<X86Register> parseRegisterName() {
    size_t start = pos_;
    while (!atEnd() && std::isalnum(static_cast<unsigned char>(peek())))
      ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    if (name.empty())
      return fail("missing register name after '%'");
    std::optional<X86Register> reg = findX86Register(name);
    if (!reg)
      return fail("unknown register '%" + std::string(name) + "'");
    return reg;
  }

  // "disp", "disp(base)", "(base,index)", "disp(base,index,scale)", "(,index,scale)".
  std::optional<Operand> parseMemory() {
    MemoryOperand mem;
    bool hasDisplacement = peek() != '(';
    if (hasDisplacement && !parseDisplacement(mem.displacement, mem.symbol))
      return std::nullopt;
    if (!accept('('))
      return Operand{std::move(mem)};
    if (accept('%')) {
      mem.base = parseRegisterName();
      if (!mem.base)
        return std::nullopt;
      if (mem.base->width < 4)
        return fail("base register '%" + std::string(mem.base->name) +
                    "' is not an address register");
      mem.ripRelative = mem.base->dwarfNumber == kDwarfRip;
    }
    if (accept(',')) {
      if (mem.ripRelative)
        return fail("a %rip-relative operand cannot have an index");
      if (!accept('%'))
        return fail("expected an index register after ','");
      mem.index = parseRegisterName();
      if (!mem.index)
        return std::nullopt;
      if (mem.index->width < 4 || mem.index->dwarfNumber == kDwarfRip || mem.index->encoding == 4)
        return fail("'%" + std::string(mem.index->name) + "' cannot be an index register");
      if (accept(',')) {
        char scale = peek();
        if (scale != '1' && scale != '2' && scale != '4' && scale != '8')
          return fail("scale must be 1, 2, 4 or 8");
        ++pos_;
        mem.scale = static_cast<uint8_t>(scale - '0');
      }
    }
    if (!mem.base && !mem.index)
      return fail("memory operand without a base or index register");
    if (!accept(')'))
      return fail("expected ')' in the memory operand");
    return Operand{std::move(mem)};
  }

  // A sum of numbers and at most one symbol: "-16", "foo", "foo+8", "8+foo", "foo-4".
  bool parseDisplacement(int64_t &value, std::string &symbol) {
    bool negate = false;
    bool first = true;
    while (true) {
      // Only the first term carries its own sign ("-16", not "foo+-4").
      bool ownSign = first && peek() == '-';
      if (isSymbolStart(peek())) {
        if (negate) {
          fail("a symbol cannot be subtracted");
          return false;
        }
        if (!symbol.empty()) {
          fail("more than one symbol in the displacement");
          return false;
        }
        size_t start = pos_;
        while (isSymbolChar(peek()))
          ++pos_;
        symbol = std::string(text_.substr(start, pos_ - start));
      } else {
        std::optional<uint64_t> number = parseNumber(ownSign);
        if (!number)
          return false;
        // Two's-complement wrap: "$-1" and "$18446744073709551615" are the same bits.
        uint64_t bits = negate ? uint64_t{0} - *number : *number;
        value = static_cast<int64_t>(static_cast<uint64_t>(value) + bits);
      }
      first = false;
      if (accept('+'))
        negate = false;
      else if (accept('-'))
        negate = true;
      else
        return true;
    }
  }

  // A decimal or 0x-hex number, negative (two's complement) if `allowMinus` and it
  // starts with '-'.
  std::optional<uint64_t> parseNumber(bool allowMinus) {
    bool minus = allowMinus && accept('-');
    int base = 10;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      base = 16;
      pos_ += 2;
    }
    uint64_t n = 0;
    const char *begin = text_.data() + pos_;
    const char *end = text_.data() + text_.size();
    auto [ptr, ec] = std::from_chars(begin, end, n, base);
    if (ec == std::errc::result_out_of_range)
      return fail("number out of range");
    if (ec != std::errc() || ptr == begin) {
      if (atEnd())
        return fail("missing number or symbol at the end");
      return fail("unexpected '" + std::string(1, peek()) + "'");
    }
    pos_ += static_cast<size_t>(ptr - begin);
    if (minus && n > uint64_t{1} << 63)
      return fail("number out of range");
    return minus ? uint64_t{0} - n : n;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string why_;
};

} // namespace

std::optional<ArgSpec> ArgSpecParser::parse(std::string_view spec, std::string &error) {
  SpecScanner scanner(spec);
  std::optional<ArgSpec> result = scanner.run();
  if (!result)
    error = "bad marker argument spec '" + std::string(spec) + "': " + scanner.why();
  return result;
}

std::optional<std::vector<ArgSpec>> ArgSpecParser::parseList(std::string_view args,
                                                             std::string &error) {
  std::vector<ArgSpec> specs;
  size_t pos = 0;
  while (pos < args.size()) {
    if (std::isspace(static_cast<unsigned char>(args[pos]))) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < args.size() && !std::isspace(static_cast<unsigned char>(args[end])))
      ++end;
    std::optional<ArgSpec> spec = parse(args.substr(pos, end - pos), error);
    if (!spec)
      return std::nullopt;
    specs.push_back(std::move(*spec));
    pos = end;
  }
  return specs;
}

} // namespace sonde::probes::marker
