/* The marker functions of agent_markers.c and agent_trap_markers.c. */
#ifndef SONDE_TESTS_AGENT_MARKERS_H
#define SONDE_TESTS_AGENT_MARKERS_H

#ifdef __cplusplus
extern "C" {
#endif

long agent_fire_registers(long a);
long agent_fire_redzone(long a);
long agent_fire_many(const long *v);
double agent_fire_vector(double x);
double agent_fire_avx(double x);
/* Vector registers changed across a marker (0 expected): bit i for xmm i; for
 * the ymm registers, how many of their 64 doubles. */
int agent_fire_all_xmm(long a);
int agent_fire_all_ymm(long a);
/* Fires regs, redzone, many and vector once each. */
long agent_run_all(long a);
long agent_fire_stock(long a);

#ifdef __cplusplus
}
#endif

#endif
