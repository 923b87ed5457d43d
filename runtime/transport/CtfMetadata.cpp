#include "runtime/transport/CtfMetadata.h"

#include <algorithm>
#include <bit>
#include <cstdio>

namespace sonde::transport {

namespace {

// TSDL keywords; a field may still carry one of these names (or any name starting
// with '_') behind a leading underscore, which CTF readers strip.
constexpr std::string_view kKeywords[] = {
    "align",   "callsite", "const",          "char",   "clock",   "double",   "enum",
    "env",     "event",    "floating_point", "float",  "integer", "int",      "long",
    "short",   "signed",   "stream",         "string", "struct",  "trace",    "typealias",
    "typedef", "unsigned", "variant",        "void",   "_Bool",   "_Complex", "_Imaginary"};

std::string fieldName(const std::string &name) {
  bool keyword = std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
  return keyword || name[0] == '_' ? "_" + name : name;
}

// A TSDL string literal: C escapes, which babeltrace2 decodes.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\%03o", byte);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string uuidText(const CtfUuid &uuid) {
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    char digits[3];
    std::snprintf(digits, sizeof digits, "%02x", uuid[i]);
    if (i == 4 || i == 6 || i == 8 || i == 10)
      out += '-';
    out += digits;
  }
  return out;
}

void appendEvent(std::string &out, const CtfEventClass &event) {
  out += "event {\n\tname = " + quoted(event.name) + ";\n\tid = " + std::to_string(event.id) +
         ";\n\tstream_id = 0;\n";
  if (!event.fields.empty()) {
    out += "\tfields := struct {\n";
    for (const CtfField &field : event.fields)
      out += std::string("\t\t") + (field.kind == CtfFieldKind::String ? "string" : "int64_t") +
             " " + fieldName(field.name) + ";\n";
    out += "\t};\n";
  }
  out += "};\n\n";
}

} // namespace

bool isCtfIdentifier(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name[0]))
    return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

std::string ctfMetadataText(const CtfTraceDescription &trace) {
  const std::string byteOrder = std::endian::native == std::endian::little ? "le" : "be";
  const std::string &clock = trace.clock.name;
  std::string out = "/* CTF 1.8 */\n\n"
                    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
                    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
                    "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
                    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
                    "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n\n";
  // The packet and event layouts below are the ones CtfStream.cpp writes.
  out += "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"" + uuidText(trace.uuid) +
         "\";\n\tbyte_order = " + byteOrder +
         ";\n\tpacket.header := struct {\n"
         "\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n\t\tuint32_t stream_id;\n"
         "\t\tuint64_t stream_instance_id;\n\t};\n};\n\n";
  out +=
      "env {\n\ttracer_name = \"sonde\";\n\ttrace_name = " + quoted(trace.traceName) + ";\n};\n\n";
  out += "clock {\n\tname = " + clock + ";\n\tfreq = " + std::to_string(trace.clock.frequency) +
         ";\n\toffset_s = " + std::to_string(trace.clock.offsetSeconds) +
         ";\n\toffset = " + std::to_string(trace.clock.offsetCycles) +
         ";\n\tabsolute = true;\n};\n\n";
  out += "typealias integer { size = 64; align = 8; signed = false; map = clock." + clock +
         ".value; } := sonde_clock_t;\n\n";
  out += "stream {\n\tid = 0;\n\tpacket.context := struct {\n"
         "\t\tsonde_clock_t timestamp_begin;\n\t\tsonde_clock_t timestamp_end;\n"
         "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
         "\t\tuint64_t events_discarded;\n\t\tuint64_t packet_seq_num;\n\t};\n"
         "\tevent.header := struct {\n\t\tuint32_t id;\n\t\tsonde_clock_t timestamp;\n\t};\n"
         // LTTng-UST's names, which Trace Compass's thread views read.
         "\tevent.context := struct {\n\t\tint32_t _vpid;\n\t\tint32_t _vtid;\n\t};\n};\n\n";
  for (const CtfEventClass &event : trace.events)
    appendEvent(out, event);
  return out;
}

} // namespace sonde::transport
