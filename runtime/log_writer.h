/* This process's log (runtime/log_writer.c). */
#ifndef IOCHAR_LOG_WRITER_H
#define IOCHAR_LOG_WRITER_H

#include <stddef.h>

#include "log_buf.h"
#include "safefile.h"

/* Flattened records of one module: rows in the in-memory row layout
 * (u64 id, i64 rank, i64 c[n_int], f64 f[n_flt]), top-k tables emitted. */
size_t iochar_module_rows(int m, iochar_buf *rows, iochar_buf *names);
/* Write the whole log of this process (serial or per-rank fallback). */
int iochar_log_write_local(const char *path);
/* One warning that the log at path (errno: why) could not be written,
 * unless the start-up check already said the directory is unusable. */
void iochar_log_failed(const char *path);
/* Give a finished file (safefile.h) the name path, or, when path exists, the
 * first free name beside it (docs/security.md, README): never replaces a
 * file.  Then checks that the name holds the file: when another file took
 * it meanwhile, one warning (LOG_TAKEN) and that file is left alone.  t is
 * closed and its temporary names removed whatever happens.  0, or -1 with
 * errno set. */
int iochar_log_publish(iochar_tmpfile *t, const char *path);
/* The same for the log of process pid (".pid<pid>" beside): a child's log
 * made by its parent (runtime/reap.c). */
int iochar_log_publish_as(iochar_tmpfile *t, const char *path, int pid);

#endif
