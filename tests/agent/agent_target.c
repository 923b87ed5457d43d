/* A program the agent tests run under libsonde-agent.so (LD_PRELOAD).
 *   agent_target threads N   main fires N ticks, then 4 threads fire N each
 *   agent_target wait N      fires N ticks, says "fired" on stdout, waits until
 *                            the tick semaphore drops (detach), fires N more
 *   agent_target fork N      fires N ticks, forks a child that fires N more
 *   agent_target exec N      fires N ticks, then execs /bin/true
 *   agent_target stock N     fires N sys/sdt.h (trap) ticks
 *   agent_target dlopen N L  opens library L, calls its marker N times, closes
 *                            it, and does it all once more
 * Prints "done" and whether the tick semaphore was ever seen set. */
#include <sonde/sdt.h>
#include <sys/sdt.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long count;
static int enabled;

static void fire(long n) {
  for (long i = 0; i < n; ++i) {
    enabled |= SONDE_PROBE_ENABLED(agent_e2e, tick);
    SONDE_PROBE(agent_e2e, tick, i);
  }
}

static void *threadMain(void *arg) {
  (void)arg;
  fire(count);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  count = strtol(argv[2], NULL, 10);
  const char *mode = argv[1];
  if (!strcmp(mode, "stock")) {
    for (long i = 0; i < count; ++i)
      STAP_PROBE1(agent_e2e, stock, i);
  } else {
    fire(count);
  }
  if (!strcmp(mode, "threads")) {
    pthread_t t[4];
    for (int i = 0; i < 4; ++i)
      pthread_create(&t[i], NULL, threadMain, NULL);
    for (int i = 0; i < 4; ++i)
      pthread_join(t[i], NULL);
  } else if (!strcmp(mode, "wait")) {
    printf("fired\n");
    fflush(stdout);
    while (SONDE_PROBE_ENABLED(agent_e2e, tick))
      usleep(1000);
    fire(count);
  } else if (!strcmp(mode, "fork")) {
    pid_t pid = fork();
    if (pid == 0) {
      fire(count);
      exit(0);
    }
    waitpid(pid, NULL, 0);
  } else if (!strcmp(mode, "dlopen") && argc > 3) {
    for (int round = 0; round < 2; ++round) {
      void *lib = dlopen(argv[3], RTLD_NOW);
      if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 4;
      }
      long (*hit)(long) = (long (*)(long))dlsym(lib, "agent_plugin_hit");
      for (long i = 0; i < count; ++i)
        hit(i);
      dlclose(lib);
    }
  } else if (!strcmp(mode, "exec")) {
    printf("enabled=%d\n", enabled);
    fflush(stdout);
    execl("/bin/true", "true", (char *)NULL);
    return 3;
  }
  printf("done enabled=%d\n", enabled);
  return 0;
}
