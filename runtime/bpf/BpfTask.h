/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): what the ids built-ins read from the current task_struct,
 * at the offsets BpfTarget finds in the kernel's BTF (the sonde_cfg_* below
 * exist only in scripts that use them). */

/* struct task_struct, struct cred, struct pid and friends, from the kernel's BTF. */
extern const uint32_t sonde_cfg_task_real_parent;
extern const uint32_t sonde_cfg_task_group_leader;
extern const uint32_t sonde_cfg_task_tgid;
extern const uint32_t sonde_cfg_task_comm;
extern const uint32_t sonde_cfg_task_thread_pid;
extern const uint32_t sonde_cfg_task_signal;
extern const uint32_t sonde_cfg_task_cred;
extern const uint32_t sonde_cfg_signal_pids;
extern const uint32_t sonde_cfg_pid_level;
extern const uint32_t sonde_cfg_pid_numbers;
extern const uint32_t sonde_cfg_upid_ns;
extern const uint32_t sonde_cfg_cred_uid;
extern const uint32_t sonde_cfg_cred_gid;
extern const uint32_t sonde_cfg_cred_euid;
extern const uint32_t sonde_cfg_cred_egid;
extern const uint32_t sonde_cfg_cred_user_ns;
extern const uint32_t sonde_cfg_userns_uid_map;
extern const uint32_t sonde_cfg_userns_gid_map;
extern const uint32_t sonde_cfg_idmap_extent;
extern const uint32_t sonde_cfg_idmap_count;

/* enum pid_type: stable since Linux 4.19. */
#define SONDE_PIDTYPE_PGID 2
#define SONDE_PIDTYPE_SID 3
/* struct upid {int nr; struct pid_namespace *ns;}: the ns follows the padded nr. */
#define SONDE_UPID_BYTES (sonde_cfg_upid_ns + 8)
/* Deeper pid namespaces than the kernel allows (MAX_PID_NS_LEVEL is 32). */
#define SONDE_MAX_PID_LEVEL 32
/* An id map keeps up to 5 ranges in place (UID_GID_MAP_MAX_BASE_EXTENTS). */
#define SONDE_IDMAP_BASE_EXTENTS 5
#define SONDE_OVERFLOW_ID 65534 /* what the kernel shows for an unmapped id */

static SONDE_INLINE const char *readPointer(const char *base, uint32_t offset) {
  const char *p = 0;
  if (!base || bpf_probe_read_kernel(&p, sizeof p, base + offset) < 0)
    return 0;
  return p;
}

static SONDE_INLINE int64_t readU32(const char *base, uint32_t offset) {
  uint32_t v = 0;
  if (!base || bpf_probe_read_kernel(&v, sizeof v, base + offset) < 0)
    return 0;
  return v;
}

static SONDE_INLINE const char *currentTask(void) { return (const char *)bpf_get_current_task(); }

/* The pid namespace `pid` was made in (its deepest level), as task_active_pid_ns(). */
static SONDE_INLINE int64_t pidLevel(const char *pid) {
  int64_t level = readU32(pid, sonde_cfg_pid_level);
  return level > SONDE_MAX_PID_LEVEL ? SONDE_MAX_PID_LEVEL : level;
}

static SONDE_INLINE const char *pidNamespaceAt(const char *pid, int64_t level) {
  return readPointer(pid, sonde_cfg_pid_numbers + (uint32_t)level * SONDE_UPID_BYTES +
                              sonde_cfg_upid_ns);
}

/* The number of `pid` in its own namespace (stap's pgrp(), sid()). */
static SONDE_INLINE int64_t ownNumber(const char *pid) {
  if (!pid)
    return 0;
  return (int32_t)readU32(pid, sonde_cfg_pid_numbers + (uint32_t)pidLevel(pid) * SONDE_UPID_BYTES);
}

/* pid_nr_ns(pid, the current task's namespace): 0 where the current task
 * cannot see `pid` (it lives in a namespace above). */
static SONDE_INLINE int64_t numberSeenByCurrent(const char *pid) {
  const char *mine = readPointer(currentTask(), sonde_cfg_task_thread_pid);
  if (!pid || !mine)
    return 0;
  int64_t level = pidLevel(mine);
  if (pidLevel(pid) < level || pidNamespaceAt(pid, level) != pidNamespaceAt(mine, level))
    return 0;
  return (int32_t)readU32(pid, sonde_cfg_pid_numbers + (uint32_t)level * SONDE_UPID_BYTES);
}

static SONDE_INLINE const char *groupPid(int type) {
  const char *signal = readPointer(currentTask(), sonde_cfg_task_signal);
  return readPointer(signal, sonde_cfg_signal_pids + (uint32_t)type * 8);
}

static SONDE_INLINE const char *leaderPid(const char *task) {
  return readPointer(readPointer(task, sonde_cfg_task_group_leader), sonde_cfg_task_thread_pid);
}

/* from_kuid/from_kgid into the current task's user namespace: a global id
 * through the namespace's id map. */
static SONDE_INLINE int64_t idSeenByCurrent(uint32_t credMember, uint32_t mapMember) {
  const char *cred = readPointer(currentTask(), sonde_cfg_task_cred);
  int64_t id = readU32(cred, credMember);
  const char *map = readPointer(cred, sonde_cfg_cred_user_ns);
  if (!map)
    return id;
  map += mapMember;
  uint32_t ranges = (uint32_t)readU32(map, sonde_cfg_idmap_count);
  if (ranges > SONDE_IDMAP_BASE_EXTENTS)
    return SONDE_OVERFLOW_ID; /* the sorted out-of-line form: not walked */
  for (uint32_t i = 0; i < SONDE_IDMAP_BASE_EXTENTS; ++i) {
    if (i >= ranges)
      break;
    /* struct uid_gid_extent {u32 first; u32 lower_first; u32 count;} */
    uint32_t extent[3] = {0, 0, 0};
    if (bpf_probe_read_kernel(extent, sizeof extent, map + sonde_cfg_idmap_extent + i * 12) < 0)
      break;
    if (id >= extent[1] && id - extent[1] < extent[2])
      return extent[0] + (id - extent[1]);
  }
  return SONDE_OVERFLOW_ID;
}

static SONDE_INLINE void copyComm(char *out, const char *task) {
  char comm[16];
  if (!task || bpf_probe_read_kernel(comm, sizeof comm, task + sonde_cfg_task_comm) < 0 ||
      bpf_probe_read_kernel_str(out, sonde_cfg_str_cap, comm) < 0)
    out[0] = 0;
}

int64_t sonde_fn_ppid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  const char *parent = readPointer(currentTask(), sonde_cfg_task_real_parent);
  return parent ? (int32_t)readU32(parent, sonde_cfg_task_tgid) : 0;
}
int64_t sonde_fn_pgrp_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return ownNumber(groupPid(SONDE_PIDTYPE_PGID));
}
int64_t sonde_fn_sid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return ownNumber(groupPid(SONDE_PIDTYPE_SID));
}
int64_t sonde_fn_euid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return readU32(readPointer(currentTask(), sonde_cfg_task_cred), sonde_cfg_cred_euid);
}
int64_t sonde_fn_egid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return readU32(readPointer(currentTask(), sonde_cfg_task_cred), sonde_cfg_cred_egid);
}
/* stap's is_myproc(): the task acts as the user who started sonde. */
int64_t sonde_fn_is_myproc_0(sonde_context *ctx, uint32_t loc) {
  return sonde_fn_euid_0(ctx, loc) == sonde_globals.consumer_uid;
}

/* The ns_* forms: as the current task sees itself, in its own namespaces. */
int64_t sonde_fn_ns_pid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return numberSeenByCurrent(leaderPid(currentTask()));
}
int64_t sonde_fn_ns_tid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return numberSeenByCurrent(readPointer(currentTask(), sonde_cfg_task_thread_pid));
}
int64_t sonde_fn_ns_ppid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return numberSeenByCurrent(leaderPid(readPointer(currentTask(), sonde_cfg_task_real_parent)));
}
int64_t sonde_fn_ns_pgrp_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return numberSeenByCurrent(groupPid(SONDE_PIDTYPE_PGID));
}
int64_t sonde_fn_ns_sid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return numberSeenByCurrent(groupPid(SONDE_PIDTYPE_SID));
}
int64_t sonde_fn_ns_uid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return idSeenByCurrent(sonde_cfg_cred_uid, sonde_cfg_userns_uid_map);
}
int64_t sonde_fn_ns_euid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return idSeenByCurrent(sonde_cfg_cred_euid, sonde_cfg_userns_uid_map);
}
int64_t sonde_fn_ns_gid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return idSeenByCurrent(sonde_cfg_cred_gid, sonde_cfg_userns_gid_map);
}
int64_t sonde_fn_ns_egid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return idSeenByCurrent(sonde_cfg_cred_egid, sonde_cfg_userns_gid_map);
}

void sonde_fn_pexecname_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)ctx, (void)loc;
  copyComm(out, readPointer(currentTask(), sonde_cfg_task_real_parent));
}
