/* The relay producer as C code calls it (generated handlers, the agent). The
 * handle is a RelayProducer (C++); who owns it per thread is the caller's
 * business (thread_local in the agent; detach at thread exit). */
#ifndef SONDE_RUNTIME_TRANSPORT_RELAY_ABI_H
#define SONDE_RUNTIME_TRANSPORT_RELAY_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sonde_relay_producer sonde_relay_producer;

/* Room for one record of `bytes` (> 0), or NULL: the record is lost and counted.
 * After a non-NULL result, write the record, then sonde_relay_commit(). */
char *sonde_relay_reserve(sonde_relay_producer *producer, uint32_t bytes);
void sonde_relay_commit(sonde_relay_producer *producer);
/* Hands the partly filled sub-buffer to the consumer now. */
void sonde_relay_flush(sonde_relay_producer *producer);

#ifdef __cplusplus
}
#endif

#endif
