// The sonde_context calls of ContextAbi.h: errors, output, exit.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/ContextAbi.h"
#include "runtime/session/ProbeRunner.h"
#include "runtime/session/RecordWriter.h"
#include "runtime/session/Runtime.h"

#include <cstring>

using namespace sonde::session;

const char *sonde::session::runtimeErrorText(int32_t status) {
  switch (status) {
  case SONDE_ERROR_DIVISION_BY_ZERO: return "division by 0";
  case SONDE_ERROR_MAXACTION: return "MAXACTION exceeded";
  case SONDE_ERROR_MAXNESTING: return "MAXNESTING exceeded";
  case SONDE_ERROR_FUNCTIONS_EXHAUSTED: return "all functions exhausted";
  case SONDE_ERROR_STRING_POSITION: return "Position out of bounds";
  case SONDE_ERROR_RANDINT_RANGE: return "range too wide";
  case SONDE_ERROR_ABORT: return "abort() called";
  default: return sonde_status_text(status);
  }
}

namespace {

void setError(sonde_context *ctx, const char *message, uint32_t loc, bool uncatchable) {
  Runtime &rt = runtimeOf(ctx);
  size_t cap = rt.maxStringLen();
  std::strncpy(ctx->error_message, message, cap - 1);
  ctx->error_message[cap - 1] = '\0';
  ctx->error = 1;
  ctx->uncatchable = uncatchable ? 1 : 0;
  ctx->error_location = loc;
}

// printf formatted here, into the thread's text buffer (the text transport, and
// formats records cannot carry). Out of line: the record path stays small.
[[gnu::noinline]] void printfAsText(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args,
                                    uint32_t loc) {
  Runtime &rt = runtimeOf(ctx);
  OutputBuffer &buf = *threadOf(ctx).output;
  // Text: gettimeofday_ns() arguments were left for the record's time; read it.
  const SondeFormatSpec &spec = rt.module->format(fmt);
  SondeFormatArg timed[64];
  if (uint64_t time = rt.module->formatTimeArgs(fmt)) {
    uint32_t count = std::min<uint32_t>(spec.arg_count, 64);
    std::copy_n(args, count, timed);
    int64_t now = sonde_fn_gettimeofday_ns_0(ctx, loc);
    for (uint32_t i = 0; i < count; ++i)
      if (time >> i & 1)
        timed[i].i = now;
    args = timed;
  }
  SondeFormatError err{};
  char *out = buf.reserve(SONDE_PRINT_BUFFER_SIZE, *rt.output);
  size_t n = sonde_format_print(&spec, args, out, SONDE_PRINT_BUFFER_SIZE, nullptr, &err);
  if (err.message) {
    setError(ctx, err.message, loc, false);
    return;
  }
  buf.commit(n);
}

// The script's name for map m (its placement in the segment), or null.
const char *globalName(const Runtime &rt, const sonde_map *m) {
  if (rt.module == nullptr || rt.segment == nullptr)
    return nullptr;
  auto offset = reinterpret_cast<const char *>(m) - static_cast<const char *>(rt.segment->base());
  const auto &layout = rt.module->layout();
  for (size_t i = 0; i < layout.placements().size(); ++i)
    if (static_cast<ptrdiff_t>(layout.placements()[i].offset) == offset)
      return layout.globals()[i].name.c_str();
  return nullptr;
}

} // namespace

extern "C" {

void sonde_raise(sonde_context *ctx, int32_t status, uint32_t loc) {
  bool uncatchable = status == SONDE_ERROR_MAXACTION || status == SONDE_ERROR_ABORT;
  setError(ctx, sonde::session::runtimeErrorText(status), loc, uncatchable);
}

void sonde_raise_message(sonde_context *ctx, const char *message, uint32_t loc) {
  setError(ctx, message, loc, false);
}

void sonde_raise_map_full(sonde_context *ctx, const sonde_map *m, uint32_t loc) {
  char text[256];
  sonde_map_overflow_message(m, globalName(runtimeOf(ctx), m), text, sizeof text);
  setError(ctx, text, loc, false);
}

void sonde_error_take(sonde_context *ctx, char *out) {
  size_t cap = runtimeOf(ctx).maxStringLen();
  std::strncpy(out, ctx->error_message, cap - 1);
  out[cap - 1] = '\0';
  ctx->error = 0;
  ctx->uncatchable = 0;
}

void sonde_out_printf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args, uint32_t loc) {
  ThreadState &ts = threadOf(ctx);
  // A record transport: the format id and the raw arguments; the consumer formats.
  if (ts.records) {
    if (const sonde_record_desc *desc = runtimeOf(ctx).records->schema->desc(fmt)) {
      ts.output->flushRecords(); // earlier text first
      ts.records->write(fmt, *desc, args);
      return;
    }
  }
  printfAsText(ctx, fmt, args, loc);
}

void sonde_out_sprintf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args, char *out,
                       uint32_t loc) {
  Runtime &rt = runtimeOf(ctx);
  SondeFormatError err{};
  sonde_format_sprint(&rt.module->format(fmt), args, out, rt.maxStringLen(), nullptr, &err);
  if (err.message)
    setError(ctx, err.message, loc, false);
}

void sonde_out_print(sonde_context *ctx, const SondeValue *values, uint32_t count,
                     const char *delimiter, int32_t newline) {
  Runtime &rt = runtimeOf(ctx);
  OutputBuffer &buf = *threadOf(ctx).output;
  char *out = buf.reserve(SONDE_PRINT_BUFFER_SIZE, *rt.output);
  buf.commit(sonde_print_values(values, count, delimiter, newline, out, SONDE_PRINT_BUFFER_SIZE));
}

void sonde_out_char(sonde_context *ctx, int64_t c) {
  char ch = static_cast<char>(c);
  threadOf(ctx).output->append(&ch, 1, *runtimeOf(ctx).output);
}

} // extern "C"

namespace {

SondeHistogram histogramOf(const sonde_stat_summary &s) {
  SondeHistogram h{};
  h.kind = s.hist_kind == SONDE_STAT_HIST_LINEAR ? SONDE_HIST_LINEAR : SONDE_HIST_LOG;
  h.bucket_count = s.bucket_count;
  h.start = s.hist_low;
  h.interval = s.hist_width;
  h.buckets = s.buckets;
  return h;
}

// Renders a summary's histogram into out (print form or, with sprint, a string).
void renderHistogram(sonde_context *ctx, int status, const sonde_stat_summary &summary, char *sout,
                     uint32_t loc) {
  Runtime &rt = runtimeOf(ctx);
  if (status != SONDE_OK) {
    sonde_raise(ctx, status, loc);
    return;
  }
  SondeHistogram h = histogramOf(summary);
  int64_t elision = rt.module->layout().limits().hist_elision;
  if (sout) {
    if (sonde_hist_sprint(&h, elision, sout, rt.maxStringLen()) == 0)
      sonde_raise(ctx, SONDE_ERR_EMPTY_AGGREGATE, loc);
    return;
  }
  OutputBuffer &buf = *threadOf(ctx).output;
  char *out = buf.reserve(SONDE_HIST_TEXT_MAX, *rt.output);
  size_t n = sonde_hist_print(&h, elision, out, SONDE_HIST_TEXT_MAX);
  if (n == 0)
    sonde_raise(ctx, SONDE_ERR_EMPTY_AGGREGATE, loc);
  buf.commit(n);
}

} // namespace

extern "C" {

void sonde_out_hist_stats(sonde_context *ctx, const sonde_stats *s, uint32_t loc) {
  sonde_stat_summary summary;
  int status = sonde_stats_summary(s, &summary);
  renderHistogram(ctx, status, summary, nullptr, loc);
}

void sonde_out_hist_map(sonde_context *ctx, const sonde_map *m, const sonde_key *keys,
                        uint32_t loc) {
  sonde_stat_summary summary;
  int status = sonde_map_stats_summary(m, keys, &summary);
  renderHistogram(ctx, status, summary, nullptr, loc);
}

void sonde_out_shist_stats(sonde_context *ctx, const sonde_stats *s, char *out, uint32_t loc) {
  sonde_stat_summary summary;
  out[0] = '\0';
  int status = sonde_stats_summary(s, &summary);
  renderHistogram(ctx, status, summary, out, loc);
}

void sonde_out_shist_map(sonde_context *ctx, const sonde_map *m, const sonde_key *keys, char *out,
                         uint32_t loc) {
  sonde_stat_summary summary;
  out[0] = '\0';
  int status = sonde_map_stats_summary(m, keys, &summary);
  renderHistogram(ctx, status, summary, out, loc);
}

void sonde_out_warn(sonde_context *ctx, const char *message) {
  Runtime &rt = runtimeOf(ctx);
  std::string line = std::string("WARNING: ") + message + "\n";
  writeError(rt, line.data(), line.size());
}

void sonde_out_log(sonde_context *ctx, const char *message) {
  Runtime &rt = runtimeOf(ctx);
  OutputBuffer &buf = *threadOf(ctx).output;
  buf.append(message, std::strlen(message), *rt.output);
  buf.append("\n", 1, *rt.output);
  buf.flush(*rt.output); // log() is immediate
}

void sonde_exit(sonde_context *ctx) {
  Runtime &rt = runtimeOf(ctx);
  sonde_session_request_exit(ctx->segment);
  if (rt.wake)
    rt.wake();
}

} // extern "C"
