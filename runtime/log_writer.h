/* This process's log (runtime/log_writer.c). */
#ifndef IOCHAR_LOG_WRITER_H
#define IOCHAR_LOG_WRITER_H

#include <stddef.h>

#include "log_buf.h"

/* Flattened records of one module: rows in the in-memory row layout
 * (u64 id, i64 rank, i64 c[n_int], f64 f[n_flt]), top-k tables emitted. */
size_t iochar_module_rows(int m, iochar_buf *rows, iochar_buf *names);
/* Write the whole log of this process (serial or per-rank fallback). */
int iochar_log_write_local(const char *path);
/* One warning that the log at path (errno: why) could not be written,
 * unless the start-up check already said the directory is unusable. */
void iochar_log_failed(const char *path);
/* Publish a finished temporary (safefile.h) at path, or beside it when path
 * exists: never replaces a file (docs/security.md, README).  On failure tmp
 * is removed.  0, or -1 with errno set. */
int iochar_log_publish(int fd, const char *tmp, const char *path);

#endif
