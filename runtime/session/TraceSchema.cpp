#include "runtime/session/TraceSchema.h"

#include "runtime/format/FormatParser.h"
#include "runtime/session/LoadedModule.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace sonde::session {

bool recordArgKinds(const SondeFormatSpec &spec, uint64_t timeArgs, std::vector<uint8_t> &kinds) {
  bool binary = true;
  for (uint32_t i = 0; i < spec.item_count; ++i) {
    const SondeFormatItem &item = spec.items[i];
    if (item.conv == SONDE_CONV_LITERAL || item.conv == SONDE_CONV_PERCENT)
      continue;
    binary = binary && item.conv != SONDE_CONV_MEMORY && item.conv != SONDE_CONV_MEMORY_HEX;
    if (item.width_kind == SONDE_SIZE_STAR)
      kinds.push_back(SONDE_RECORD_ARG_LONG);
    if (item.precision_kind == SONDE_SIZE_STAR)
      kinds.push_back(SONDE_RECORD_ARG_LONG);
    size_t arg = kinds.size();
    kinds.push_back(item.conv == SONDE_CONV_STRING           ? SONDE_RECORD_ARG_STRING
                    : arg < 64 && (timeArgs >> arg & 1) != 0 ? SONDE_RECORD_ARG_TIME
                                                             : SONDE_RECORD_ARG_LONG);
  }
  return binary;
}

namespace {

constexpr std::string_view kSchemaHeader = "sonde-trace-schema 1";

// The identifier ending `literal` once trailing separators are dropped, or "".
std::string trailingName(std::string_view literal) {
  size_t end = literal.size();
  while (end > 0 && std::string_view(" \t=:").find(literal[end - 1]) != std::string_view::npos)
    --end;
  size_t begin = end;
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(literal[begin - 1])) ||
                       literal[begin - 1] == '_'))
    --begin;
  while (begin < end && std::isdigit(static_cast<unsigned char>(literal[begin])))
    ++begin;
  return std::string(literal.substr(begin, end - begin));
}

// "\t", "\n" and "\\" escaped: one schema field per tab-separated column.
std::string escapeField(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::optional<std::string> unescapeField(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size())
      return std::nullopt;
    switch (s[i]) {
    case '\\': out += '\\'; break;
    case 't': out += '\t'; break;
    case 'n': out += '\n'; break;
    default: return std::nullopt;
    }
  }
  return out;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

std::vector<std::string> formatFieldNames(const SondeFormatSpec &spec) {
  std::vector<std::string> names;
  std::set<std::string> taken;
  auto add = [&](std::string name) {
    if (taken.count(name))
      for (int n = 2;; ++n)
        if (!taken.count(name + "_" + std::to_string(n))) {
          name += "_" + std::to_string(n);
          break;
        }
    taken.insert(name);
    names.push_back(std::move(name));
  };
  std::string_view text(spec.text ? spec.text : "");
  std::string label;
  for (uint32_t i = 0; i < spec.item_count; ++i) {
    const SondeFormatItem &item = spec.items[i];
    if (item.conv == SONDE_CONV_LITERAL) {
      label = trailingName(text.substr(item.offset, item.length));
      continue;
    }
    if (item.conv == SONDE_CONV_PERCENT)
      continue;
    std::string base = label.empty() ? "arg" + std::to_string(names.size() + 1) : label;
    label.clear();
    if (item.width_kind == SONDE_SIZE_STAR)
      add(base + "_width");
    if (item.precision_kind == SONDE_SIZE_STAR)
      add(base + "_precision");
    add(base);
  }
  return names;
}

std::optional<TraceSchema> TraceSchema::build(const std::vector<Format> &formats,
                                              std::string *error) {
  TraceSchema schema;
  for (const Format &f : formats)
    if (!schema.add(f, error))
      return std::nullopt;
  schema.finish();
  return schema;
}

TraceSchema TraceSchema::fromModule(const LoadedModule &module) {
  TraceSchema schema;
  uint32_t count = std::min<uint32_t>(module.desc().format_count, kMaxFormats);
  std::string ignored;
  for (uint32_t i = 0; i < count; ++i)
    schema.add({module.format(i).text, module.formatSource(i), module.formatTimeArgs(i)},
               &ignored); // parsed once already
  schema.finish();
  return schema;
}

bool TraceSchema::add(Format f, std::string *error) {
  if (types_.size() >= kMaxFormats) {
    *error = "more than " + std::to_string(kMaxFormats) + " printf formats";
    return false;
  }
  format::ParsedFormat parsed = format::parseFormat(f.text);
  if (!parsed.ok()) {
    *error = "format #" + std::to_string(types_.size()) + " \"" + f.text + "\": " + parsed.error();
    return false;
  }
  TraceEventType &t = types_.emplace_back();
  t.format = std::move(f.text);
  t.source = std::move(f.source);
  t.timeArgs = f.timeArgs;
  t.items = std::move(parsed.items);
  return true;
}

// Pointers into the types are taken once every type is in place.
void TraceSchema::finish() {
  descs_.assign(kTextId + 1, sonde_record_desc{nullptr, 0});
  for (size_t id = 0; id < types_.size(); ++id) {
    TraceEventType &t = types_[id];
    t.spec =
        SondeFormatSpec{t.format.c_str(), t.items.data(), static_cast<uint32_t>(t.items.size()),
                        sonde_format_arg_count(t.items.data(), t.items.size())};
    t.kinds.clear();
    t.binary = recordArgKinds(t.spec, t.timeArgs, t.kinds);
    t.fields = formatFieldNames(t.spec);
    descs_[id] = {t.kinds.data(), static_cast<uint32_t>(t.kinds.size())};
  }
  binary_.assign(types_.size(), nullptr);
  maxSizes_.assign(types_.size(), 0);
  for (size_t id = 0; id < types_.size(); ++id) {
    const TraceEventType &t = types_[id];
    if (t.binary)
      binary_[id] = &descs_[id];
    uint32_t max = SONDE_RECORD_EXTENDED_SIZE + SONDE_RECORD_HEADER_SIZE;
    for (uint8_t kind : t.kinds)
      max = kind == SONDE_RECORD_ARG_STRING ? 0
            : max == 0                      ? 0
            : kind == SONDE_RECORD_ARG_LONG ? max + SONDE_RECORD_VARINT_MAX
                                            : max;
    maxSizes_[id] = max;
  }
  text_.kinds = {SONDE_RECORD_ARG_STRING};
  text_.fields = {"text"};
  descs_[kTextId] = {text_.kinds.data(), 1};
  userStack_.kinds = {SONDE_RECORD_ARG_LONG, SONDE_RECORD_ARG_STRING};
  userStack_.fields = {"style", "stack"};
  descs_[kUserStackId] = {userStack_.kinds.data(), 2};
  objects_.kinds = {SONDE_RECORD_ARG_STRING};
  objects_.fields = {"objects"};
  descs_[kObjectsId] = {objects_.kinds.data(), 1};
}

const TraceEventType *TraceSchema::type(uint32_t id) const {
  if (id == kTextId)
    return &text_;
  if (id == kUserStackId)
    return &userStack_;
  if (id == kObjectsId)
    return &objects_;
  return id < types_.size() ? &types_[id] : nullptr;
}

std::string TraceSchema::serialize() const {
  std::string out(kSchemaHeader);
  out += '\n';
  for (const TraceEventType &t : types_)
    out += "format\t" + escapeField(t.source) + "\t" + escapeField(t.format) + "\t" +
           hex(t.timeArgs) + "\n";
  return out;
}

std::optional<TraceSchema> TraceSchema::parse(std::string_view text, std::string *error) {
  std::vector<Format> formats;
  size_t lineNo = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++lineNo;
    auto fail = [&](const std::string &what) {
      *error = "line " + std::to_string(lineNo) + ": " + what;
      return std::nullopt;
    };
    if (lineNo == 1) {
      if (line != kSchemaHeader)
        return fail("expected \"" + std::string(kSchemaHeader) + "\"");
      continue;
    }
    std::vector<std::string_view> cols;
    for (size_t at = 0;;) {
      size_t tab = line.find('\t', at);
      cols.push_back(line.substr(at, tab == std::string_view::npos ? tab : tab - at));
      if (tab == std::string_view::npos)
        break;
      at = tab + 1;
    }
    if (cols.size() != 4 || cols[0] != "format")
      return fail("expected \"format<TAB>source<TAB>text<TAB>time-arguments\"");
    std::optional<std::string> source = unescapeField(cols[1]);
    std::optional<std::string> format = unescapeField(cols[2]);
    if (!source || !format)
      return fail("bad escape sequence");
    std::string mask(cols[3]);
    char *end = nullptr;
    errno = 0;
    uint64_t timeArgs = std::strtoull(mask.c_str(), &end, 16);
    if (mask.empty() || *end != '\0' || errno != 0)
      return fail("bad time-arguments mask '" + mask + "'");
    formats.push_back({std::move(*format), std::move(*source), timeArgs});
  }
  if (lineNo == 0) {
    *error = "empty schema";
    return std::nullopt;
  }
  return build(formats, error);
}

} // namespace sonde::session
