/* LUSTRE module counters: a composite Lustre layout's components over the
 * accessed extent, one record per such POSIX file, made at the job's end
 * (wrappers/posix.c lustre_finish).  Darshan's LUSTRE_COMP<N>_* names. */
#ifndef IOCHAR_LUSTRE_COUNTERS_H
#define IOCHAR_LUSTRE_COUNTERS_H
#include "../runtime/counters.h"

/* The N-th lowest component holding file data in [0, the highest byte
 * accessed] (runtime/lustre.h iochar_lustre_comp); all 0: no such one (FLAGS
 * is never 0 for one: it is instantiated).  At most IOCHAR_LUSTRE_MAX_COMPS. */
#define LUSTRE_COMP(X, N)                                                       \
  X(LUSTRE_COMP##N##_EXT_START, ANY)      /* extent start, bytes */             \
  X(LUSTRE_COMP##N##_EXT_END, ANY)        /* extent end; -1: to EOF */          \
  X(LUSTRE_COMP##N##_STRIPE_SIZE, ANY)    /* bytes */                           \
  X(LUSTRE_COMP##N##_STRIPE_COUNT, ANY)   /* OSTs; 0: on the MDT */             \
  X(LUSTRE_COMP##N##_STRIPE_PATTERN, ANY) /* lmm_pattern (0x100: DOM) */        \
  X(LUSTRE_COMP##N##_FLAGS, ANY)          /* lcme_flags (0x10: instantiated) */ \
  X(LUSTRE_COMP##N##_MIRROR_ID, ANY)      /* FLR mirror id (lcme_id >> 16) */

#define LUSTRE_COUNTERS(X)                                             \
  X(LUSTRE_COMPONENTS, ANY)   /* the layout's entries (all mirrors) */ \
  X(LUSTRE_COMPS_LISTED, ANY) /* of them, the COMP<N> slots used */    \
  LUSTRE_COMP(X, 1)                                                    \
  LUSTRE_COMP(X, 2)                                                    \
  LUSTRE_COMP(X, 3)                                                    \
  LUSTRE_COMP(X, 4)

enum { LUSTRE_COUNTERS(IOCHAR_ENUM_ENTRY) LUSTRE_NUM_INDICES };
enum { LUSTRE_F_NUM_INDICES = 0 }; /* no floating counters */

#endif
