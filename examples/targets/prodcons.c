/* prodcons: a multi-threaded producer/consumer over a bounded queue, for the
 * examples.
 *
 * Usage: prodcons [PRODUCERS [CONSUMERS [ITEMS]]]   (default 2 2 10000)
 *
 * Each producer puts ITEMS items (numbered producer * ITEMS + k) into one queue
 * of 16 slots guarded by one mutex; consumers take them until all
 * PRODUCERS * ITEMS are consumed. Every 1000th item a consumer works 1 ms.
 * Markers (provider `queue`):
 *   lock_wait(thread)              a thread starts waiting for the queue's mutex
 *   lock_acquired(thread)          ... and has it (pairs with lock_wait)
 *   produce(item, depth)           an item went in; depth after it
 *   consume(item, depth)           an item came out; depth after it
 *   full(thread) / empty(thread)   a producer / consumer found the queue full / empty
 * Threads are numbered 0..PRODUCERS-1 (producers) then the consumers.
 * Prints "produced N consumed N" at the end. */
#include <pthread.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kSlots = 16 };

static long producers = 2, consumers = 2, items = 10000;
static long queue[kSlots], head, count, consumedTotal, producedTotal;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t notFull = PTHREAD_COND_INITIALIZER, notEmpty = PTHREAD_COND_INITIALIZER;

static void take(long thread) {
  SONDE_PROBE(queue, lock_wait, thread);
  pthread_mutex_lock(&lock);
  SONDE_PROBE(queue, lock_acquired, thread);
}

static void *producer(void *arg) {
  long thread = (long)arg;
  for (long k = 0; k < items; ++k) {
    long item = thread * items + k;
    take(thread);
    while (count == kSlots) {
      SONDE_PROBE(queue, full, thread);
      pthread_cond_wait(&notFull, &lock);
    }
    queue[(head + count) % kSlots] = item;
    ++count;
    ++producedTotal;
    SONDE_PROBE(queue, produce, item, count);
    pthread_cond_signal(&notEmpty);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void *consumer(void *arg) {
  long thread = (long)arg;
  for (;;) {
    take(thread);
    while (count == 0 && consumedTotal < producers * items) {
      SONDE_PROBE(queue, empty, thread);
      pthread_cond_wait(&notEmpty, &lock);
    }
    if (consumedTotal == producers * items) {
      pthread_cond_broadcast(&notEmpty);
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    long item = queue[head];
    head = (head + 1) % kSlots;
    --count;
    ++consumedTotal;
    SONDE_PROBE(queue, consume, item, count);
    if (consumedTotal == producers * items)
      pthread_cond_broadcast(&notEmpty);
    pthread_cond_signal(&notFull);
    pthread_mutex_unlock(&lock);
    if (item % 1000 == 999) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
  }
}

int main(int argc, char **argv) {
  if (argc > 1)
    producers = strtol(argv[1], NULL, 10);
  if (argc > 2)
    consumers = strtol(argv[2], NULL, 10);
  if (argc > 3)
    items = strtol(argv[3], NULL, 10);
  if (producers < 1 || consumers < 1 || producers + consumers > 64 || items < 0) {
    fprintf(stderr, "usage: %s [PRODUCERS [CONSUMERS [ITEMS]]] (at most 64 threads)\n", argv[0]);
    return 2;
  }
  pthread_t tids[64];
  long n = 0;
  for (long p = 0; p < producers; ++p, ++n)
    pthread_create(&tids[n], NULL, producer, (void *)n);
  for (long c = 0; c < consumers; ++c, ++n)
    pthread_create(&tids[n], NULL, consumer, (void *)n);
  for (long t = 0; t < n; ++t)
    pthread_join(tids[t], NULL);
  printf("produced %ld consumed %ld\n", producedTotal, consumedTotal);
  return 0;
}
