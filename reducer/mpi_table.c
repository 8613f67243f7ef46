/* -Dmpi=both: this MPI's wrappers in reducer/mpi_names.h's order, the one
 * symbol of this copy the dispatcher (reducer/mpi_dispatch.c) sees: meson.build
 * makes the rest of the copy local, so the MPICH and the Open MPI copies link
 * side by side.  Built only into the per-MPI copies (IOCHAR_MPI_TABLE set). */
#include <mpi.h>

#include "mpi_names.h"

#define TABLE_ENTRY(n) (const void *)&n,
const void *const IOCHAR_MPI_TABLE[IOCHAR_MPI_NNAMES] = {IOCHAR_MPI_NAMES(TABLE_ENTRY)
#if MPI_VERSION >= 4
                                                             IOCHAR_MPI_NAMES_C(TABLE_ENTRY)
#endif
};
