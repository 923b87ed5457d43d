// Records formatted as text, as the handler would have printed them: printf
// records through their format, text records as they are. Output goes to the
// session's OutputSink once per drain round (or when the buffer fills); records
// a failed write did not take are counted (recordsNotWritten).
#pragma once

#include "runtime/format/FormatAbi.h"
#include "runtime/session/OutputSink.h"
#include "runtime/session/RecordSink.h"
#include "runtime/session/RecordTextBuffer.h"

namespace sonde::session {

class TextRecordSink final : public RecordSink {
public:
  explicit TextRecordSink(OutputSink &output)
      : pending_([&output](const char *data, size_t n) { return output.write(data, n); }) {}
  void event(const TraceEvent &e) override;
  void flush() override { pending_.flush(); }
  // Write errors are the OutputSink's to report (OutputSink::failure()).
  bool close(std::string *) override {
    flush();
    return true;
  }
  uint64_t recordsNotWritten() const override { return pending_.recordsNotWritten(); }

private:
  RecordTextBuffer pending_;
  char formatted_[SONDE_PRINT_BUFFER_SIZE];
};

} // namespace sonde::session
