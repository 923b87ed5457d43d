#include "runtime/session/JsonRecordSink.h"

#include <charconv>

namespace sonde::session {

namespace {

// Bytes in the valid UTF-8 sequence at text[i] (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or 0 when it is not one.
size_t utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length;
  unsigned char low = 0x80, high = 0xbf; // range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    low = lead == 0xe0 ? 0xa0 : 0x80;
    high = lead == 0xed ? 0x9f : 0xbf;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    low = lead == 0xf0 ? 0x90 : 0x80;
    high = lead == 0xf4 ? 0x8f : 0xbf;
  } else {
    return 0;
  }
  if (text.size() - i < length || byte(i + 1) < low || byte(i + 1) > high)
    return 0;
  for (size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf)
      return 0;
  return length;
}

void appendEscapedByte(std::string &out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u00";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xf];
}

void appendInt(std::string &out, int64_t value) {
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

void appendOrigin(std::string &out, const RecordOrigin &origin) {
  out += "\"pid\":";
  appendInt(out, origin.pid);
  out += ",\"tid\":";
  appendInt(out, origin.tid);
}

} // namespace

void appendJsonString(std::string &out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      size_t length = utf8SequenceLength(text, i);
      if (length == 0) {
        appendEscapedByte(out, byte);
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    ++i;
    switch (byte) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (byte < 0x20 || byte == 0x7f)
        appendEscapedByte(out, byte);
      else
        out += static_cast<char>(byte);
    }
  }
  out += '"';
}

void JsonRecordSink::event(const TraceEvent &e) {
  std::string &out = pending_.text();
  out += "{\"time_ns\":";
  appendInt(out, sonde_trace_clock_to_realtime_ns(&clock_, e.reading));
  out += ',';
  appendOrigin(out, e.origin);
  if (e.id == TraceSchema::kTextId) {
    out += ",\"text\":";
    appendJsonString(out, e.args[0].s ? e.args[0].s : "");
  } else {
    const TraceEventType &type = *e.type;
    out += ",\"probe\":";
    appendJsonString(out, type.source);
    out += ",\"format\":";
    appendJsonString(out, type.format);
    out += ",\"fields\":{";
    for (size_t i = 0; i < type.kinds.size(); ++i) {
      if (i > 0)
        out += ',';
      appendJsonString(out, type.fields[i]);
      out += ':';
      if (type.kinds[i] == SONDE_RECORD_ARG_STRING)
        appendJsonString(out, e.args[i].s ? e.args[i].s : "");
      else // longs, and record times (decoded as realtime ns)
        appendInt(out, e.args[i].i);
    }
    out += '}';
  }
  out += "}\n";
  pending_.endRecord();
}

void JsonRecordSink::lost(const RecordOrigin &origin, uint64_t count) {
  std::string &out = pending_.text();
  out += "{\"lost\":";
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof digits, count).ptr;
  out.append(digits, end);
  out += ',';
  appendOrigin(out, origin);
  out += "}\n";
}

bool JsonRecordSink::close(std::string *) {
  flush();
  return true;
}

} // namespace sonde::session
