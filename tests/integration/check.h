/* CHECK for the C workloads: a failed step names itself and ends the run
 * (code 3; an MPI workload defines CHECK_FAIL to abort every rank). */
#ifndef IOCHAR_TESTS_CHECK_H
#define IOCHAR_TESTS_CHECK_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHECK_FAIL
#define CHECK_FAIL() exit(3)
#endif

#define CHECK(x)                                                       \
  do {                                                                 \
    if (!(x)) {                                                        \
      fprintf(stderr, "check failed: %s (%s)\n", #x, strerror(errno)); \
      CHECK_FAIL();                                                    \
    }                                                                  \
  } while (0)

#endif
