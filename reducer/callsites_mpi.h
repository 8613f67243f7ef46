/* Call sites across the ranks (reducer/callsites_mpi.c). */
#ifndef IOCHAR_CALLSITES_MPI_H
#define IOCHAR_CALLSITES_MPI_H

struct iochar_buf;

/* Collective over *(MPI_Comm *)comm, called on
 * every rank when any rank records call sites (the reducer's job facts say);
 * merges identical stacks across ranks at an owner chosen by stack hash and
 * appends this rank's share of the CALLSITE and LOADMAP sections. */
int iochar_callsites_mpi_sections(void *comm, struct iochar_buf *out, int *nsections);

#endif
