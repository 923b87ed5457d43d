/* End-to-end target that floods the agent's status pipe, as a statically
 * linked program under `sonde -c` can (no agent loads to close the pipe): 8 MiB
 * without a newline, then a short report. The pipe's fd is the one its
 * environment names (SONDE_AGENT_STATUS_FD). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const char *fdText = getenv("SONDE_AGENT_STATUS_FD");
  if (!fdText) {
    fprintf(stderr, "e2e_report_flood: SONDE_AGENT_STATUS_FD is not set\n");
    return 2;
  }
  int fd = atoi(fdText);
  static char chunk[64 * 1024];
  memset(chunk, 'x', sizeof chunk);
  for (int i = 0; i < 128; ++i)
    if (write(fd, chunk, sizeof chunk) < 0)
      return 3;
  const char tail[] = "\nerror: after the flood\n";
  if (write(fd, tail, sizeof tail - 1) < 0)
    return 3;
  printf("flooded the status pipe\n");
  return 0;
}
