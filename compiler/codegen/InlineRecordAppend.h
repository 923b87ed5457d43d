// printf's binary record written by the handler itself (RecordCursor.h): with
// the relay transport, a printf whose arguments are all numbers appends its
// record to the thread's open sub-buffer without a call into the runtime (the
// TSC read, the header, the varints, two stores to the slot), and calls the
// runtime only when the cursor says no (no room, text waiting, no sub-buffer).
#pragma once

#include "codegen/CodegenTarget.h"

#include <functional>

namespace sonde::codegen {

// Whether `call` can be appended inline: a record whose arguments are numbers
// or the record's time.
bool appendsInline(const CodegenTarget::PrintfCall &call);

// Emits the inline append of `call`, with `emitRuntimeCall` on the other path.
void emitInlineRecordAppend(RuntimeBuilder &b, llvm::Value *ctx,
                            const CodegenTarget::PrintfCall &call,
                            const std::function<void()> &emitRuntimeCall);

} // namespace sonde::codegen
