/* A process for `sonde -x` that loads and unloads a library with markers in a
 * loop (dlopen, call, dlclose), as plugin hosts do: the agent must never write
 * into the library while it is being unmapped, nor leave it patched when it is
 * loaded again. Each call fires dlcycle:hit (sonde/sdt.h) 100 times and
 * dlcycle_stock:hit (stock sys/sdt.h) once and returns a sum the loop checks.
 * Prints "ready" after the first cycle; on SIGTERM (or after CYCLES cycles)
 * prints "cycles N: ok" (or "cycles N: WRONG ...") and exits 0 (3 if wrong).
 * Usage: e2e_dlcycle LIBRARY [CYCLES] */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t stopping;

static void onStop(int sig) {
  (void)sig;
  stopping = 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [CYCLES]\n", argv[0]);
    return 2;
  }
  long cycles = argc > 2 ? atol(argv[2]) : -1;
  struct sigaction sa = {0};
  sa.sa_handler = onStop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  long c;
  for (c = 0; !stopping && c != cycles; ++c) {
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    int64_t (*work)(int64_t) = lib ? (int64_t(*)(int64_t))dlsym(lib, "dlcycle_work") : NULL;
    if (!work) {
      printf("cycles %ld: WRONG (%s)\n", c, dlerror());
      return 3;
    }
    int64_t sum = work(c);
    dlclose(lib);
    if (sum != 100 * c + 4950) {
      printf("cycles %ld: WRONG (sum %lld)\n", c, (long long)sum);
      return 3;
    }
    if (c == 0) {
      printf("ready\n");
      fflush(stdout);
    }
  }
  printf("cycles %ld: ok\n", c);
  return 0;
}
