/* The C ABI generated handlers use to reach script state in the shared segment.
 *
 * Every pointer below is an address in the caller's own mapping of the segment:
 * `sonde_segment *` is the mapping's base, `sonde_map *` / `sonde_stats *` are
 * base + GlobalPlacement::offset of that global (its header, which also holds its
 * lock). Scalar longs and strings have no functions: codegen loads and stores an
 * int64_t / a char[MAXSTRINGLEN] at base + GlobalPlacement::dataOffset directly.
 *
 * Failures are status codes (enum sonde_status), never exceptions or longjmp;
 * sonde_status_text() gives stap's message for each. Nothing here allocates from
 * the heap or makes a system call on the fast path.
 *
 * Locking contract: a handler calls sonde_locks_take() for every global it reads
 * or writes (arrays of stats included, because `<<<` may insert a key), except
 * scalar stats, which are per-CPU and lock-free. Map functions assume the map's
 * lock is held by the calling thread.
 */
#ifndef SONDE_RUNTIME_VALUES_VALUE_ABI_H
#define SONDE_RUNTIME_VALUES_VALUE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sonde_segment sonde_segment; /* base of a mapped segment */
typedef struct sonde_map sonde_map;         /* header of an array global */
typedef struct sonde_stats sonde_stats;     /* header of a scalar stats global */

/* One index value of an array access: `l` for long columns, `s` for string
 * columns (NUL-terminated; bytes past MAXSTRINGLEN-1 are ignored, like stap). */
typedef union sonde_key {
  int64_t l;
  const char *s;
} sonde_key;

enum sonde_status {
  SONDE_OK = 0,
  SONDE_ERR_MAP_FULL = 1,        /* "Array overflow, check MAXMAPENTRIES" or "... size limit (N)" */
  SONDE_ERR_EMPTY_AGGREGATE = 2, /* "empty aggregate" */
  SONDE_ERR_HIST_INDEX = 3,      /* "histogram index out of range" */
  SONDE_ERR_SKIPPED = 4,         /* lock budget (MAXTRYLOCK x TRYLOCKDELAY) spent: skip the hit */
  SONDE_ERR_NO_MEMORY = 5,       /* no scratch memory for a foreach snapshot */
};

/* Stats extractors, in stap's order. */
enum sonde_extractor {
  SONDE_STAT_COUNT = 0,
  SONDE_STAT_SUM = 1,
  SONDE_STAT_MIN = 2,
  SONDE_STAT_MAX = 3,
  SONDE_STAT_AVG = 4,
  SONDE_STAT_VARIANCE = 5,
};

enum sonde_stat_hist_kind {
  SONDE_STAT_HIST_NONE = 0,
  SONDE_STAT_HIST_LOG = 1,
  SONDE_STAT_HIST_LINEAR = 2
};

/* Session states, as stap's STAP_SESSION_*. */
enum sonde_session_state {
  SONDE_SESSION_STARTING = 0,
  SONDE_SESSION_RUNNING = 1,
  SONDE_SESSION_ERROR = 2,
  SONDE_SESSION_STOPPING = 3,
  SONDE_SESSION_STOPPED = 4,
};

/* Limits in force for a session (stap's -D macros); stored in the segment header. */
typedef struct sonde_limits {
  uint32_t max_string_len;           /* MAXSTRINGLEN, bytes including the NUL (default 512) */
  uint32_t max_map_entries;          /* MAXMAPENTRIES (2048) */
  uint32_t max_action;               /* MAXACTION (1000) */
  uint32_t max_action_interruptible; /* MAXACTION_INTERRUPTIBLE (10 x MAXACTION) */
  uint32_t max_try_lock;             /* MAXTRYLOCK (100) */
  uint32_t try_lock_delay_us;        /* TRYLOCKDELAY in microseconds (10) */
  uint32_t max_errors;               /* MAXERRORS (0) */
  uint32_t max_skipped;              /* MAXSKIPPED (100) */
  int32_t hist_elision;              /* HIST_ELISION (2) */
  uint32_t suppress_time_limits;     /* non-zero: --suppress-time-limits (no MAXTRYLOCK) */
  uint32_t max_backtrace;            /* MAXBACKTRACE, frames of a stack (20) */
} sonde_limits;

/* A merged stats value: what stap's _stp_stat_get() yields. */
typedef struct sonde_stat_summary {
  int64_t count, sum, min, max;
  int64_t avg;           /* @avg: sum / count, truncated */
  int64_t variance;      /* @variance, stap's integer Welford + total-variance merge */
  uint32_t hist_kind;    /* enum sonde_stat_hist_kind */
  uint32_t bucket_count; /* 0, 128 (log) or (H-L)/W + 3 (linear) */
  int64_t hist_low, hist_high, hist_width; /* linear shape */
  int64_t buckets[128];
} sonde_stat_summary;

/* foreach: a snapshot iterator living in the caller's stack frame. */
typedef struct sonde_iter {
  uint64_t opaque[8];
} sonde_iter;

#define SONDE_SORT_NONE (-1) /* sort_column: insertion order (stap's unsorted foreach) */
#define SONDE_SORT_VALUE 0   /* sort_column: by value; 1..9 sort by that index column */
#define SONDE_NO_LIMIT INT64_MAX

typedef struct sonde_foreach_spec {
  int32_t sort_column;    /* SONDE_SORT_NONE, SONDE_SORT_VALUE or 1..9 */
  int32_t descending;     /* non-zero for `-`, zero for `+` */
  int32_t extractor;      /* stats values: enum sonde_extractor to sort by (stap default @count) */
  uint32_t slice_wild;    /* bit i set: column i is `*` in a slice (only if slice != NULL) */
  int64_t limit;          /* at most this many entries (<= 0: none), SONDE_NO_LIMIT for all */
  const sonde_key *slice; /* foreach (... in a[k, *]): fixed columns, or NULL for all */
} sonde_foreach_spec;

/* ---- status and session ---- */

/* stap's message for a status (the MAXMAPENTRIES form for SONDE_ERR_MAP_FULL). */
const char *sonde_status_text(int status);
/* Writes the overflow message for map m: stap's size-limit form if declared `a[N]`;
 * else stap's MAXMAPENTRIES form, followed, when `name` (the global's) is given,
 * by the limit and what to raise it to. */
size_t sonde_map_overflow_message(const sonde_map *m, const char *name, char *buf, size_t cap);
/* The limits the segment was created with. */
const sonde_limits *sonde_segment_limits(const sonde_segment *seg);
/* Current enum sonde_session_state. */
int sonde_session_state(const sonde_segment *seg);
/* Non-zero while new handlers may start (state RUNNING). */
int sonde_session_running(const sonde_segment *seg);
/* Moves STARTING/RUNNING to `state` (sonde only: RUNNING at start, STOPPED at the end). */
void sonde_session_set_state(sonde_segment *seg, int state);
/* exit(): RUNNING -> STOPPING and flags the request for sonde's main loop. */
void sonde_session_request_exit(sonde_segment *seg);
/* Non-zero once exit() was called or the session failed. */
int sonde_session_exit_requested(const sonde_segment *seg);
/* Counts a runtime error; returns 1 when it is the one past MAXERRORS (state -> ERROR). */
int sonde_session_note_error(sonde_segment *seg);
/* Counts a skipped hit; returns 1 when it is the one past MAXSKIPPED (state -> ERROR). */
int sonde_session_note_skipped(sonde_segment *seg);
/* Runtime errors / skipped hits counted so far. */
uint64_t sonde_session_error_count(const sonde_segment *seg);
uint64_t sonde_session_skipped_count(const sonde_segment *seg);
/* An agent (in a traced process) starts / stops using the segment. */
void sonde_session_agent_enter(sonde_segment *seg);
void sonde_session_agent_leave(sonde_segment *seg);
/* Agents attached now whose process is alive (a zombie still counts). */
uint32_t sonde_session_agent_count(const sonde_segment *seg);
/* In a fork child, before any handler runs: per-process state of the value model
 * (the pid that owns stats slots) belongs to the child from now on. Also done by
 * an atfork handler, whose order against other atfork handlers is not known. */
void sonde_values_forked(void);

/* ---- locks ---- */

/* Takes the locks of the globals at `global_offsets` (ascending), all or none, within
 * MAXTRYLOCK x TRYLOCKDELAY; SONDE_ERR_SKIPPED if not (the caller counts the skip).
 * A lock whose holder died is recovered and its global repaired. */
int sonde_locks_take(sonde_segment *seg, const uint64_t *global_offsets, uint32_t count);
/* Releases locks taken by sonde_locks_take, same arguments. */
void sonde_locks_release(sonde_segment *seg, const uint64_t *global_offsets, uint32_t count);

/* ---- arrays (caller holds the map's lock) ---- */

/* a[k]: the value, 0 if missing (not created). */
int64_t sonde_map_get_long(const sonde_map *m, const sonde_key *keys);
/* a[k]: copies the value into out (MAXSTRINGLEN bytes), "" if missing (not created). */
void sonde_map_get_string(const sonde_map *m, const sonde_key *keys, char *out);
/* a[k] = v. */
int sonde_map_set_long(sonde_map *m, const sonde_key *keys, int64_t v);
/* a[k] = v (truncated to MAXSTRINGLEN-1 bytes). */
int sonde_map_set_string(sonde_map *m, const sonde_key *keys, const char *v);
/* Get-or-insert (0): *out points at the value until the entry is deleted or cleared. */
int sonde_map_ref_long(sonde_map *m, const sonde_key *keys, int64_t **out);
/* Get-or-insert (""): *out points at the MAXSTRINGLEN-byte value buffer, as above. */
int sonde_map_ref_string(sonde_map *m, const sonde_key *keys, char **out);
/* `k in a`: 1 if present. */
int sonde_map_exists(const sonde_map *m, const sonde_key *keys);
/* `[k, *] in a`: 1 if an entry matches; bit i of `wild` marks column i as `*`. */
int sonde_map_exists_wild(const sonde_map *m, const sonde_key *keys, uint32_t wild);
/* delete a[k] (missing is fine). */
void sonde_map_delete(sonde_map *m, const sonde_key *keys);
/* delete a[k, *]: removes every match; bit i of `wild` marks column i as `*`. */
void sonde_map_delete_wild(sonde_map *m, const sonde_key *keys, uint32_t wild);
/* delete a. */
void sonde_map_clear(sonde_map *m);
/* Number of entries. */
uint32_t sonde_map_count(const sonde_map *m);
/* a[k] <<< v (inserts an empty stats value first if missing). */
int sonde_map_stats_add(sonde_map *m, const sonde_key *keys, int64_t v);
/* @count/@sum/... (a[k]): missing or empty -> 0 for COUNT/SUM, else EMPTY_AGGREGATE. */
int sonde_map_stats_extract(const sonde_map *m, const sonde_key *keys, int32_t extractor,
                            int64_t *out);
/* @hist_*(a[k])[i]: EMPTY_AGGREGATE if missing/empty, HIST_INDEX if i is out of range. */
int sonde_map_stats_bucket(const sonde_map *m, const sonde_key *keys, int64_t index, int64_t *out);
/* print(@hist_*(a[k])) and friends: EMPTY_AGGREGATE if missing or empty. */
int sonde_map_stats_summary(const sonde_map *m, const sonde_key *keys, sonde_stat_summary *out);

/* ---- foreach (caller holds the map's lock for the whole loop) ---- */

/* Snapshots the entries in the requested order into per-thread scratch memory. */
int sonde_foreach_begin(const sonde_map *m, const sonde_foreach_spec *spec, sonde_iter *it);
/* Advances; 1 when positioned on an entry, 0 at the end. */
int sonde_foreach_next(sonde_iter *it);
/* Index column `column` (1-based) of the current entry, long / string (valid during the loop). */
int64_t sonde_iter_key_long(const sonde_iter *it, uint32_t column);
const char *sonde_iter_key_string(const sonde_iter *it, uint32_t column);
/* Value of the current entry, long / string (string valid during the loop). */
int64_t sonde_iter_value_long(const sonde_iter *it);
const char *sonde_iter_value_string(const sonde_iter *it);
/* Stats value of the current entry: extractor result or status as sonde_map_stats_extract. */
int sonde_iter_stats_extract(const sonde_iter *it, int32_t extractor, int64_t *out);
/* Stats value of the current entry, merged. */
int sonde_iter_stats_summary(const sonde_iter *it, sonde_stat_summary *out);
/* Releases the snapshot; nested loops must end in reverse order of begin. */
void sonde_foreach_end(sonde_iter *it);
/* Releases every snapshot of this thread (handler exit after an error skipped the ends). */
void sonde_scratch_release_all(void);

/* ---- scalar stats (lock-free, per-CPU slots) ---- */

/* s <<< v. */
void sonde_stats_add(sonde_stats *s, int64_t v);
/* @count/@sum/@min/@max/@avg/@variance(s); EMPTY_AGGREGATE except COUNT/SUM on empty. */
int sonde_stats_extract(const sonde_stats *s, int32_t extractor, int64_t *out);
/* @hist_*(s)[i]: EMPTY_AGGREGATE if empty, HIST_INDEX if i is out of range. */
int sonde_stats_bucket(const sonde_stats *s, int64_t index, int64_t *out);
/* All slots merged, for printing; EMPTY_AGGREGATE if empty (summary still filled). */
int sonde_stats_summary(const sonde_stats *s, sonde_stat_summary *out);
/* delete s. */
void sonde_stats_clear(sonde_stats *s);
/* Lower bound of bucket i of a summary's histogram (log: 0, +-2^k; linear: L + (i-1)W). */
int64_t sonde_hist_bucket_value(const sonde_stat_summary *summary, uint32_t bucket);

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RUNTIME_VALUES_VALUE_ABI_H */
