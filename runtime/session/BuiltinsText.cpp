// Built-ins that render values as text (BuiltinAbi.h): ctime, byte order, and
// abort(). Sizes, durations and ANSI escapes are tapsets (stdlib/units.probe,
// stdlib/ansi.probe).
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"

using namespace sonde::session;

namespace {

size_t cap(sonde_context *ctx) { return runtimeOf(ctx).maxStringLen(); }

} // namespace

extern "C" {

void sonde_fn_ctime_1(sonde_context *ctx, char *out, int64_t secs, uint32_t loc) {
  size_t length = 0;
  if (const char *error = sonde_str_ctime(secs, out, cap(ctx), &length))
    sonde_raise_message(ctx, error, loc);
}

void sonde_fn_ctime_0(sonde_context *ctx, char *out, uint32_t loc) {
  sonde_fn_ctime_1(ctx, out, sonde_fn_gettimeofday_s_0(ctx, loc), loc);
}

int64_t sonde_fn_htonl_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_htonl(x); }
int64_t sonde_fn_htons_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_htons(x); }
int64_t sonde_fn_htonll_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_htonll(x); }
int64_t sonde_fn_ntohl_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_ntohl(x); }
int64_t sonde_fn_ntohs_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_ntohs(x); }
int64_t sonde_fn_ntohll_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_ntohll(x); }

int64_t sonde_fn_is_return_0(sonde_context *, uint32_t) { return 0; }

void sonde_fn_abort_0(sonde_context *ctx, uint32_t loc) {
  ctx->error = SONDE_CONTEXT_ABORTED;
  ctx->uncatchable = 1;
  ctx->error_location = loc;
}

} // extern "C"
