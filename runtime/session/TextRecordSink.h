// Records formatted as text, as the handler would have printed them: printf
// records through their format, text records as they are. Output goes to the
// session's OutputSink once per drain round (or when the buffer fills).
#pragma once

#include "runtime/session/OutputSink.h"
#include "runtime/session/RecordSink.h"

namespace sonde::session {

class TextRecordSink final : public RecordSink {
public:
  explicit TextRecordSink(OutputSink &output) : output_(output) {}
  void event(const TraceEvent &e) override;
  void flush() override { pending_.flush(output_); }
  bool close(std::string *) override {
    flush();
    return true;
  }

private:
  OutputSink &output_;
  OutputBuffer pending_;
};

} // namespace sonde::session
