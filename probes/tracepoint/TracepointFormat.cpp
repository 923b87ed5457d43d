#include "probes/tracepoint/TracepointFormat.h"

#include <charconv>

namespace sonde::probes::tracepoint {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool parseNumber(std::string_view s, uint32_t &out) {
  s = trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// The value of `key:` in the `;`-separated attributes of a field line.
std::optional<std::string_view> attribute(std::string_view line, std::string_view key) {
  size_t at = 0;
  while (at < line.size()) {
    size_t end = line.find(';', at);
    std::string_view item = trim(line.substr(at, end == std::string_view::npos ? end : end - at));
    if (item.size() > key.size() && item.substr(0, key.size()) == key && item[key.size()] == ':')
      return item.substr(key.size() + 1);
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return std::nullopt;
}

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Syscall tracepoints keep each argument in an 8-byte slot whatever its C type
// (`int dfd; size:8; signed:0`): the value is the declared type's low bytes,
// so `$dfd` of AT_FDCWD reads -100, as the C argument is.
void narrowToDeclaredType(std::string_view type, TracepointField &f) {
  if (type.substr(0, 6) == "const ")
    type = trim(type.substr(6));
  struct Declared {
    std::string_view name;
    uint32_t size;
    bool isSigned;
  };
  static constexpr Declared kTypes[] = {{"int", 4, true},
                                        {"signed int", 4, true},
                                        {"unsigned int", 4, false},
                                        {"unsigned", 4, false},
                                        {"short", 2, true},
                                        {"unsigned short", 2, false},
                                        {"char", 1, true},
                                        {"unsigned char", 1, false},
                                        {"pid_t", 4, true},
                                        {"uid_t", 4, false},
                                        {"gid_t", 4, false},
                                        {"umode_t", 2, false},
                                        {"clockid_t", 4, true},
                                        {"mqd_t", 4, true},
                                        {"timer_t", 4, true},
                                        {"key_serial_t", 4, true},
                                        {"key_t", 4, true},
                                        {"rwf_t", 4, true},
                                        {"qid_t", 4, false},
                                        {"u32", 4, false},
                                        {"s32", 4, true},
                                        {"u16", 2, false},
                                        {"s16", 2, true},
                                        {"u8", 1, false},
                                        {"s8", 1, true},
                                        {"__u32", 4, false},
                                        {"__s32", 4, true}};
  for (const Declared &d : kTypes)
    if (d.name == type && d.size < f.size) {
      f.size = d.size;
      f.isSigned = d.isSigned;
    }
}

// "TYPE NAME", "TYPE NAME[N]" or "__data_loc TYPE[] NAME" into the field.
bool parseDeclaration(std::string_view decl, TracepointField &f, std::string &why) {
  decl = trim(decl);
  std::string_view suffix;
  if (!decl.empty() && decl.back() == ']') {
    size_t open = decl.rfind('[');
    suffix = decl.substr(open);
    decl = trim(decl.substr(0, open));
  }
  size_t nameAt = decl.size();
  while (nameAt > 0 && isIdentifierChar(decl[nameAt - 1]))
    --nameAt;
  if (nameAt == decl.size() || nameAt == 0) {
    why = "expected a type and a field name in '" + std::string(decl) + "'";
    return false;
  }
  f.name = decl.substr(nameAt);
  std::string_view type = trim(decl.substr(0, nameAt));
  bool dataLoc = false;
  for (std::string_view prefix : {"__data_loc ", "__rel_loc "})
    if (type.substr(0, prefix.size()) == prefix) {
      dataLoc = true;
      type = trim(type.substr(prefix.size()));
    }
  std::string_view element = type;
  if (dataLoc && element.size() >= 2 && element.substr(element.size() - 2) == "[]")
    element = trim(element.substr(0, element.size() - 2));
  f.type = std::string(type) + std::string(suffix);
  bool charElement = element == "char" || element == "unsigned char" || element == "signed char";
  if (dataLoc) {
    f.kind = charElement ? TracepointFieldKind::DynamicString : TracepointFieldKind::Array;
    return true;
  }
  if (!suffix.empty()) {
    // `[]`: a flexible array at the record's end (count 0).
    if (suffix != "[]" && !parseNumber(suffix.substr(1, suffix.size() - 2), f.count)) {
      why = "array size '" + std::string(suffix) + "' of field " + f.name + " is not a number";
      return false;
    }
    f.kind = charElement ? TracepointFieldKind::CharArray : TracepointFieldKind::Array;
    return true;
  }
  if (type.find('*') != std::string_view::npos) {
    f.kind = TracepointFieldKind::Pointer;
  } else if (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8) {
    f.kind = TracepointFieldKind::Integer;
    narrowToDeclaredType(type, f);
  }
  return true;
}

bool parseField(std::string_view line, TracepointField &f, std::string &why) {
  // field:DECL;\toffset:N;\tsize:N;\tsigned:N;
  size_t end = line.find(';');
  if (end == std::string_view::npos) {
    why = "a field line ends with ';'";
    return false;
  }
  std::string_view decl = line.substr(line.find(':') + 1, end - line.find(':') - 1);
  std::string_view rest = line.substr(end + 1);
  auto offset = attribute(rest, "offset"), size = attribute(rest, "size");
  if (!offset || !size || !parseNumber(*offset, f.offset) || !parseNumber(*size, f.size)) {
    why = "field without a numeric offset and size";
    return false;
  }
  uint32_t isSigned = 0;
  if (auto s = attribute(rest, "signed"); s && !parseNumber(*s, isSigned)) {
    why = "field with a non-numeric signed:";
    return false;
  }
  f.isSigned = isSigned != 0;
  if (!parseDeclaration(decl, f, why))
    return false;
  f.common = f.name.rfind("common_", 0) == 0;
  return true;
}

} // namespace

std::optional<TracepointFormat> parseTracepointFormat(std::string_view text, std::string *error) {
  TracepointFormat format;
  bool haveName = false, haveId = false;
  size_t lineNumber = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = trim(text.substr(at, end - at));
    at = end + 1;
    ++lineNumber;
    std::string why;
    if (line.substr(0, 5) == "name:") {
      format.name = trim(line.substr(5));
      haveName = !format.name.empty();
    } else if (line.substr(0, 3) == "ID:") {
      haveId = parseNumber(line.substr(3), format.id);
      if (!haveId)
        why = "the ID is not a number";
    } else if (line.substr(0, 6) == "field:") {
      TracepointField f;
      if (parseField(line, f, why))
        format.fields.push_back(std::move(f));
    } else if (line.substr(0, 10) == "print fmt:") {
      break;
    }
    if (!why.empty()) {
      *error = "line " + std::to_string(lineNumber) + ": " + why;
      return std::nullopt;
    }
  }
  if (!haveName || !haveId) {
    *error = std::string("line ") + std::to_string(lineNumber) + ": no " +
             (haveName ? "ID:" : "name:") + " line";
    return std::nullopt;
  }
  return format;
}

const TracepointField *findTracepointField(const TracepointFormat &format, std::string_view name) {
  const TracepointField *ret = nullptr;
  for (const TracepointField &f : format.fields) {
    if (f.name == name)
      return &f;
    if (f.name == "ret")
      ret = &f;
  }
  return name == "return" ? ret : nullptr;
}

} // namespace sonde::probes::tracepoint
