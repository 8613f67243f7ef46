/* The C unit tests' one assertion: compare as integers, report, keep going
 * (main returns failures != 0). */
#ifndef IOCHAR_TEST_EXPECT_H
#define IOCHAR_TEST_EXPECT_H

#include <stdio.h>

static int failures;
#define EXPECT(a, b)                                                                         \
  do {                                                                                       \
    long long a_ = (long long)(a), b_ = (long long)(b);                                      \
    if (a_ != b_) {                                                                          \
      fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)

#endif
