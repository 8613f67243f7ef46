/* The MPI shutdown (reducer/reduce.c): reduce, compress, one collective write.
 * Its steps and what they share are in reducer/steps.h. */
#ifndef IOCHAR_REDUCE_H
#define IOCHAR_REDUCE_H

/* Called from MPI_Finalize (reducer/lifecycle.c) with iochar_in_tool set,
 * before PMPI_Finalize.  0 when the log is written (or already was), non-zero
 * when the shutdown could not run or failed. */
int iochar_mpi_reduce_and_write(void);

#endif
