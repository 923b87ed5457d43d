#include "runtime/session/Runtime.h"

#include "runtime/session/RecordWriter.h"
#include "runtime/values/SegmentFormat.h"

#include <chrono>
#include <unistd.h>

namespace sonde::session {

ThreadState::ThreadState(uint32_t maxStringLen)
    : errorMessage(maxStringLen, '\0'), tokenizeBuffer(maxStringLen, '\0') {
  tokenizer.text = tokenizeBuffer.data();
  tokenizer.capacity = maxStringLen;
  // Any non-zero seed works for xorshift; mix in the thread and the time.
  randomState =
      (static_cast<uint64_t>(gettid()) * 0x9e3779b97f4a7c15ull ^
       static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())) |
      1;
}

ThreadState::~ThreadState() {
  if (records)
    output->flushRecords(); // before the writer's buffer is handed back
}

void ThreadState::useRecords(const RecordTransport &transport) {
  records = std::make_unique<RecordWriter>(transport);
  recordCursor = records->inlineCursor();
  output->sendAsRecords(records.get(), recordCursor);
}

void ThreadState::flushOutput(OutputSink &sink) {
  output->flush(sink);
  if (records)
    records->sendBatch();
}

void ThreadState::stopRecords() {
  if (!records)
    return;
  output->flushRecords();
  output->sendAsRecords(nullptr, nullptr);
  recordCursor = nullptr;
  records.reset();
}

ThreadState &Runtime::thread() {
  if (threadSource)
    return threadSource(*this);
  thread_local std::unique_ptr<ThreadState> state;
  thread_local const Runtime *owner = nullptr;
  if (!state || owner != this) {
    state = std::make_unique<ThreadState>(maxStringLen());
    owner = this;
    if (records)
      state->useRecords(*records);
  }
  return *state;
}

void writeError(Runtime &rt, const char *text, size_t size) {
  // Pending output first, so a warning follows what the handler printed before it.
  rt.thread().output->flush(*rt.output);
  while (size > 0) {
    ssize_t n = ::write(rt.errorFd, text, size);
    if (n <= 0)
      return;
    text += n;
    size -= static_cast<size_t>(n);
  }
}

void countOutputLossesInSegment(Runtime &rt) {
  values::OutputAccounting &shared = values::segmentHeader(rt.segment->abi()).output;
  rt.output->countLossesIn(&shared);
  if (rt.records && rt.records->netlink)
    rt.records->netlink->countLossesIn(&shared.netlinkRecordsLost);
}

} // namespace sonde::session
