// Built-ins that render values as text or terminal control (BuiltinAbi.h):
// time and size strings, byte order, ANSI escapes, and abort().
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>

using namespace sonde::session;

namespace {

size_t cap(sonde_context *ctx) { return runtimeOf(ctx).maxStringLen(); }

// Writes escape text to the output stream, as stap's ansi.stp prints it.
void emit(sonde_context *ctx, const char *text) {
  threadOf(ctx).output->append(text, std::strlen(text), *runtimeOf(ctx).output);
}

// ESC [ n1;n2;... FINAL: the parameterised ANSI sequences.
void emitControl(sonde_context *ctx, std::initializer_list<int64_t> numbers, char final) {
  char text[96] = "\033[";
  size_t n = 2;
  for (int64_t v : numbers)
    n += static_cast<size_t>(std::snprintf(text + n, sizeof text - n, "%s%lld",
                                           n > 2 ? ";" : "", static_cast<long long>(v)));
  text[n++] = final;
  text[n] = '\0';
  emit(ctx, text);
}

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

void sonde_fn_msecs_to_string_1(sonde_context *ctx, char *out, int64_t t, uint32_t) {
  sonde_str_msecs_to_string(t, out, cap(ctx));
}
void sonde_fn_usecs_to_string_1(sonde_context *ctx, char *out, int64_t t, uint32_t) {
  sonde_str_usecs_to_string(t, out, cap(ctx));
}
void sonde_fn_nsecs_to_string_1(sonde_context *ctx, char *out, int64_t t, uint32_t) {
  sonde_str_nsecs_to_string(t, out, cap(ctx));
}
void sonde_fn_bytes_to_string_1(sonde_context *ctx, char *out, int64_t n, uint32_t) {
  sonde_str_bytes_to_string(n, out, cap(ctx));
}

int64_t sonde_fn_htonl_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_htonl(x); }
int64_t sonde_fn_htons_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_htons(x); }
int64_t sonde_fn_htonll_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_htonll(x); }
int64_t sonde_fn_ntohl_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_ntohl(x); }
int64_t sonde_fn_ntohs_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_ntohs(x); }
int64_t sonde_fn_ntohll_1(sonde_context *, int64_t x, uint32_t) { return sonde_str_ntohll(x); }

void sonde_fn_ansi_clear_screen_0(sonde_context *ctx, uint32_t) { emit(ctx, "\033[1;1H\033[J"); }
void sonde_fn_ansi_reset_color_0(sonde_context *ctx, uint32_t) { emit(ctx, "\033[0;0m"); }
void sonde_fn_ansi_new_line_0(sonde_context *ctx, uint32_t) { emit(ctx, "\n"); }
void sonde_fn_ansi_cursor_hide_0(sonde_context *ctx, uint32_t) { emit(ctx, "\033[?25l"); }
void sonde_fn_ansi_cursor_show_0(sonde_context *ctx, uint32_t) { emit(ctx, "\033[?25h"); }
void sonde_fn_ansi_cursor_save_0(sonde_context *ctx, uint32_t) { emit(ctx, "\0337"); }
void sonde_fn_ansi_cursor_restore_0(sonde_context *ctx, uint32_t) { emit(ctx, "\0338"); }

void sonde_fn_ansi_set_color_1(sonde_context *ctx, int64_t fg, uint32_t) {
  emitControl(ctx, {fg}, 'm');
}
void sonde_fn_ansi_set_color_2(sonde_context *ctx, int64_t fg, int64_t bg, uint32_t) {
  emitControl(ctx, {fg, bg}, 'm');
}
void sonde_fn_ansi_set_color_3(sonde_context *ctx, int64_t fg, int64_t bg, int64_t attr,
                               uint32_t) {
  emitControl(ctx, {fg, bg, attr}, 'm');
}
void sonde_fn_ansi_cursor_move_2(sonde_context *ctx, int64_t x, int64_t y, uint32_t) {
  emitControl(ctx, {y, x}, 'H');
}

int64_t sonde_fn_is_return_0(sonde_context *, uint32_t) { return 0; }

void sonde_fn_abort_0(sonde_context *ctx, uint32_t loc) {
  ctx->error = SONDE_CONTEXT_ABORTED;
  ctx->uncatchable = 1;
  ctx->error_location = loc;
}

} // extern "C"
