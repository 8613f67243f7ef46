/* Cross-rank merge of one record: fixed-size partials that both reduction
 * paths (rows gathered at an owner, and MPI_Reduce over wide records) fold. */
#ifndef IOCHAR_MERGE_H
#define IOCHAR_MERGE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of one partial of module m (header, row, tie-break ranks, top-k). */
size_t iochar_partial_size(int m);
/* The identity: merging it changes nothing. */
void iochar_partial_empty(int m, void *p);
/* A partial holding one rank's row (the in-memory row layout: runtime/log_sections.h). */
void iochar_partial_from_row(int m, void *p, const void *row);
/* into = into (+) from; commutative and associative (up to float rounding). */
void iochar_partial_merge(int m, void *into, const void *from);
/* The row of a partial: rank -1 when it holds several ranks, else its rank. */
void iochar_partial_to_row(int m, const void *p, void *row);

#endif
