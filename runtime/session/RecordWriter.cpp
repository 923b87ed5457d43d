#include "runtime/session/RecordWriter.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace sonde::session {

RecordWriter::RecordWriter(const RecordTransport &transport)
    : transport_(transport), relay_(std::make_unique<transport::RelayProducer>(*transport.relay)) {}

RecordWriter::~RecordWriter() { relay_->detach(); }

void RecordWriter::writeText(const char *text) {
  const sonde_record_desc &desc = transport_.schema->table()[TraceSchema::kTextId];
  // A record must fit a sub-buffer: longer text goes in pieces.
  size_t piece = transport_.relay->header().subbufSize / 2;
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

void RecordWriter::flush() { relay_->flush(); }

void RecordWriter::forgetAfterFork() { relay_->forgetAfterFork(); }

} // namespace sonde::session
