/* How an MPI wrapper is declared, for the MPI runtime (reducer/lifecycle.c)
 * and the MPI-IO wrappers (wrappers/mpiio*.c) alike: MPI_WRAP(ret, MPI_x,
 * (params)) opens the definition of MPI_x; PREAL(MPI_x) is the real PMPI_x,
 * resolved at the first call (no libmpi is linked). */
#ifndef IOCHAR_MPI_WRAP_H
#define IOCHAR_MPI_WRAP_H

#include "../runtime/interpose.h"
#include "mpi_names.h"
#include "pmpi.h"

#ifdef OPEN_MPI
/* Open MPI's Fortran bindings (mpif.h, use mpi, use mpi_f08) call PMPI_x, not
 * MPI_x: the wrapper answers to both names.  Open MPI's own libraries call
 * no PMPI_File_* (ROMIO's PMPI_Wait* calls on its message requests are not
 * in the pending map, so they pass through), so nothing is counted twice. */
#define IOCHAR_PMPI_TWIN(name) \
  extern __typeof__(name) P##name __attribute__((alias(#name), visibility("default")));
#else /* MPICH's Fortran bindings call the C MPI_x symbols */
#define IOCHAR_PMPI_TWIN(name)
#endif

#ifdef IOCHAR_MPI_TABLE
/* The dispatcher exports only the names of reducer/mpi_names.h: a wrapper
 * missing from that list would never be called, so it does not compile. */
#define IOCHAR_LISTED_(n) iochar_listed_##n = 1,
enum { IOCHAR_MPI_NAMES(IOCHAR_LISTED_) IOCHAR_MPI_NAMES_C(IOCHAR_LISTED_) };
#undef IOCHAR_LISTED_
#define IOCHAR_MPI_LISTED(name) \
  _Static_assert(iochar_listed_##name, #name " is not in reducer/mpi_names.h");
#else
#define IOCHAR_MPI_LISTED(name)
#endif

#define MPI_WRAP(ret, name, params)        \
  IOCHAR_MPI_LISTED(name)                  \
  static __typeof__(&P##name) real_##name; \
  IOCHAR_PMPI_TWIN(name)                   \
  __attribute__((visibility("default"))) ret name params

#define PREAL(name)                                                                          \
  ({                                                                                         \
    if (__builtin_expect(real_##name == 0, 0))                                               \
      real_##name = (__typeof__(real_##name))iochar_resolve("P" #name, (const void *)&name); \
    real_##name;                                                                             \
  })

#endif
