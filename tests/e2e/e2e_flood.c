/* End-to-end target for output accounting: THREADS threads each fire
 * `tick` (thread, sequence) EVENTS times, then the program writes
 * "fired TOTAL errno-changed N" to DIR/fired (not to stdout, which a test may
 * point at /dev/full): N counts the markers after which errno was not what
 * the thread set before it (a handler's failed write must not leak into it). With "wait" it first
 * writes its pid to DIR/ready and fires only once DIR/go exists, so a test can stop sonde before
 * the first event. Usage: e2e_flood THREADS EVENTS DIR [wait] */
#include <errno.h>
#include <pthread.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long events;
static long errnoChanged;

static void *fire(void *thread) {
  long id = (long)thread;
  volatile int *error = &errno; /* the marker's asm clobbers nothing it knows of */
  for (long i = 0; i < events; ++i) {
    int mine = 7000 + (int)(i & 7);
    *error = mine;
    SONDE_PROBE(e2e, tick, id, i);
    if (*error != mine)
      __atomic_add_fetch(&errnoChanged, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void writeFile(const char *dir, const char *name, const char *text) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
    perror(path);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: e2e_flood THREADS EVENTS DIR [wait]\n");
    return 2;
  }
  long threads = strtol(argv[1], NULL, 10);
  events = strtol(argv[2], NULL, 10);
  const char *dir = argv[3];
  if (threads < 1 || threads > 64 || events < 0)
    return 2;
  if (argc > 4 && strcmp(argv[4], "wait") == 0) {
    char text[32];
    snprintf(text, sizeof text, "%d\n", (int)getpid());
    writeFile(dir, "ready", text);
    char go[4096];
    snprintf(go, sizeof go, "%s/go", dir);
    struct timespec pause = {0, 1000000};
    while (access(go, F_OK) != 0)
      nanosleep(&pause, NULL);
  }
  pthread_t ids[64];
  for (long t = 0; t < threads; ++t)
    if (pthread_create(&ids[t], NULL, fire, (void *)t) != 0) {
      perror("pthread_create");
      return 1;
    }
  for (long t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  char text[96];
  snprintf(text, sizeof text, "fired %ld errno-changed %ld\n", threads * events, errnoChanged);
  writeFile(dir, "fired", text);
  return 0;
}
