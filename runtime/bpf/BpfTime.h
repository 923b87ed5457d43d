/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): the time built-ins that are not tapsets: ctime(), the
 * time zone sonde captured at startup, HZ() and cpu_clock_*(). They give the
 * same values and text as runtime/session (BuiltinsText.cpp,
 * BuiltinsProcess.cpp, runtime/strings/TimeText.cpp). get_cycles() is not
 * here: BPF has no helper that reads the cycle counter (BpfTarget names the
 * reason when a kernel probe calls it). */

/* ------------------------------------------------------------------ ctime */

#define SONDE_SECONDS_PER_DAY 86400

/* Names padded to 4 bytes; indexes are masked, so 8 and 16 entries. */
static const char sonde_day_names[8][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", ""};
static const char sonde_month_names[16][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* ctime(secs) ("Thu Jan  1 00:00:00 1970", UTC), then " zone" when `zone` is
 * set (tz_ctime). Outside stap's 32-bit time_t: its error and "". The
 * calendar is computed without loops (days to civil date, H. Hinnant's
 * algorithm), the text written by bpf_snprintf. */
static SONDE_INLINE void ctimeText(sonde_context *ctx, char *out, int64_t secs, const char *zone,
                                   uint32_t loc) {
  out[0] = 0;
  if (secs > 2147483647ll) {
    sonde_raise_message(ctx, "Time too far in the future to be converted", loc);
    return;
  }
  if (secs < -2147483648ll) {
    sonde_raise_message(ctx, "Time too far in the past to be converted", loc);
    return;
  }
  int64_t days = secs / SONDE_SECONDS_PER_DAY;
  int64_t rem = secs % SONDE_SECONDS_PER_DAY;
  if (rem < 0) {
    rem += SONDE_SECONDS_PER_DAY;
    --days;
  }
  int64_t weekday = ((4 + days) % 7 + 7) % 7; /* 1970-01-01 was a Thursday */
  /* Days since 0000-03-01; the 400-year era is 0 or 4 in the 32-bit range. */
  int64_t z = days + 719468;
  int64_t era = z / 146097;
  int64_t doe = z - era * 146097;                                      /* [0, 146096] */
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
  int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11], from March */
  int64_t day = doy - (153 * mp + 2) / 5 + 1;
  int64_t month = mp < 10 ? mp + 2 : mp - 10; /* 0 = January */
  int64_t year = yoe + era * 400 + (month <= 1);
  /* The masks bound the table indexes for the verifier, which cannot follow
   * the divisions; the barrier keeps the compiler from dropping them. */
  uint64_t dayIndex = (uint64_t)weekday, monthIndex = (uint64_t)month;
  asm volatile("" : "+r"(dayIndex), "+r"(monthIndex));
  __u64 args[8] = {(__u64)sonde_day_names[dayIndex & 7],
                   (__u64)sonde_month_names[monthIndex & 15],
                   (__u64)day,
                   (__u64)(rem / 3600),
                   (__u64)(rem % 3600 / 60),
                   (__u64)(rem % 60),
                   (__u64)year,
                   (__u64)zone};
  if (zone)
    bpf_snprintf(out, sonde_cfg_str_cap, "%s %s%3d %02d:%02d:%02d %d %s", args, sizeof args);
  else
    bpf_snprintf(out, sonde_cfg_str_cap, "%s %s%3d %02d:%02d:%02d %d", args, 7 * sizeof args[0]);
}

void sonde_fn_ctime_1(sonde_context *ctx, char *out, int64_t secs, uint32_t loc) {
  ctimeText(ctx, out, secs, 0, loc);
}
void sonde_fn_ctime_0(sonde_context *ctx, char *out, uint32_t loc) {
  ctimeText(ctx, out, sonde_fn_gettimeofday_s_0(ctx, loc), 0, loc);
}

/* ------------------------------------------------------------------ time zone */

/* The zone sonde had when it started, which it put in the control block. */
int64_t sonde_fn_tz_gmtoff_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return sonde_globals.tz_seconds_west;
}
void sonde_fn_tz_name_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)ctx, (void)loc;
  sonde_bpf_strcpy(out, sonde_globals.tz_name, sonde_cfg_str_cap);
}
/* stap's tzinfo.stp: ctime(secs - tz_gmtoff()) . " " . tz_name(). */
void sonde_fn_tz_ctime_1(sonde_context *ctx, char *out, int64_t secs, uint32_t loc) {
  ctimeText(ctx, out, secs - sonde_globals.tz_seconds_west, sonde_globals.tz_name, loc);
}

/* ------------------------------------------------------------------ HZ, CPU clocks */

/* CONFIG_HZ of the kernel sonde compiled the script for (BpfTarget refuses the
 * script when the kernel's configuration does not say). */
int64_t sonde_fn_HZ_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return sonde_cfg_hz;
}

/* stap reads the scheduler clock of `cpu`; BPF can read no other CPU's, so,
 * as in sonde (BuiltinsProcess.cpp), every CPU reads CLOCK_MONOTONIC (the
 * clock bpf_ktime_get_ns() reads), and a CPU that does not exist reads 0. */
static SONDE_INLINE int64_t cpuClockNs(int64_t cpu) {
  if (cpu < 0 || cpu >= sonde_globals.cpus)
    return 0;
  return (int64_t)bpf_ktime_get_ns();
}
int64_t sonde_fn_cpu_clock_ns_1(sonde_context *ctx, int64_t cpu, uint32_t loc) {
  (void)ctx, (void)loc;
  return cpuClockNs(cpu);
}
int64_t sonde_fn_cpu_clock_us_1(sonde_context *ctx, int64_t cpu, uint32_t loc) {
  (void)ctx, (void)loc;
  return cpuClockNs(cpu) / 1000;
}
int64_t sonde_fn_cpu_clock_ms_1(sonde_context *ctx, int64_t cpu, uint32_t loc) {
  (void)ctx, (void)loc;
  return cpuClockNs(cpu) / 1000000;
}
int64_t sonde_fn_cpu_clock_s_1(sonde_context *ctx, int64_t cpu, uint32_t loc) {
  (void)ctx, (void)loc;
  return cpuClockNs(cpu) / 1000000000;
}
