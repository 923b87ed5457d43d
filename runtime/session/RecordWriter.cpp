#include "runtime/session/RecordWriter.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace sonde::session {

RecordWriter::RecordWriter(const RecordTransport &transport) : transport_(transport) {
  if (transport.relay) {
    relay_ = std::make_unique<transport::RelayProducer>(*transport.relay);
    stream_ = &relay_->cursor().stream;
    // Generated code reads the TSC itself; another clock goes through the runtime.
    if (transport.clock.source == SONDE_CLOCK_TSC) {
      relay_->allowInlineAppends();
      inlineCursor_ = &relay_->cursor();
    }
  } else
    netlink_ = std::make_unique<transport::NetlinkProducer>(*transport.netlink);
}

RecordWriter::~RecordWriter() {
  if (relay_)
    relay_->detach();
  else
    netlink_->detach();
}

void RecordWriter::writeText(const char *text) {
  const sonde_record_desc &desc = transport_.schema->table()[TraceSchema::kTextId];
  // A record must fit a sub-buffer (a netlink message): longer text goes in pieces.
  size_t piece =
      (transport_.relay ? transport_.relay->subbufSize() : transport::kNetlinkMaxMessageBytes) / 2;
  size_t n = std::strlen(text);
  SondeFormatArg arg;
  if (n <= piece) {
    arg.s = text;
    write(TraceSchema::kTextId, desc, &arg);
    return;
  }
  std::string part;
  for (size_t at = 0; at < n; at += piece) {
    part.assign(text + at, std::min(piece, n - at));
    arg.s = part.c_str();
    write(TraceSchema::kTextId, desc, &arg);
  }
}

void RecordWriter::flush() {
  if (relay_)
    relay_->flush();
  else
    netlink_->flush();
}

void RecordWriter::forgetAfterFork() {
  if (relay_)
    relay_->forgetAfterFork();
  else
    netlink_->forgetAfterFork();
}

} // namespace sonde::session
