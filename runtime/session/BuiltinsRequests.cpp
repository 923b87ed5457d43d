// system() and switch_file(): work only the sonde process does (SessionRequests).
// A handler in sonde hands it over directly; one in a traced process posts it to
// the segment's mailbox, which sonde serves as requests arrive.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"
#include "runtime/session/SessionRequests.h"
#include "runtime/values/SegmentFormat.h"
#include "runtime/values/SessionMailbox.h"

#include <cstring>
#include <string>

using namespace sonde::session;
namespace values = sonde::values;

namespace {

// A full mailbox: how long a traced process waits for sonde to make room.
constexpr int kRoomWaitMs = 1000;
// switch_file() in a traced process waits until sonde has switched, so that
// what its thread prints next goes to the new file; not longer than this.
constexpr int kSwitchWaitMs = 5000;

} // namespace

extern "C" {

void sonde_fn_system_1(sonde_context *ctx, const char *command, uint32_t) {
  Runtime &rt = runtimeOf(ctx);
  if (rt.requests) {
    rt.requests->queueCommand(command);
    return;
  }
  // sonde starts it as soon as it arrives: what the handler printed so far goes first.
  threadOf(ctx).flushOutput(*rt.output);
  if (std::strlen(command) >= values::kMailboxText) {
    std::string text = "system(): a traced process can pass sonde commands of at most " +
                       std::to_string(values::kMailboxText - 1) + " bytes; not run: " + command;
    sonde_out_warn(ctx, text.c_str());
  } else if (!values::postMail(ctx->segment, values::MailKind::Command, command, kRoomWaitMs)) {
    std::string text = std::string("system(): sonde is not taking commands; not run: ") + command;
    sonde_out_warn(ctx, text.c_str());
  }
}

void sonde_fn_switch_file_0(sonde_context *ctx, uint32_t) {
  Runtime &rt = runtimeOf(ctx);
  // What this thread printed so far belongs in the file being closed.
  threadOf(ctx).flushOutput(*rt.output);
  if (rt.requests) {
    rt.requests->switchOutput();
    return;
  }
  if (auto position = values::postMail(ctx->segment, values::MailKind::SwitchFile, "", kRoomWaitMs))
    values::waitServed(ctx->segment, *position, kSwitchWaitMs);
}

} // extern "C"
