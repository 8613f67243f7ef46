/* POSIX calls that move file data without read/write (copy_file_range,
 * sendfile, splice), and the I/O no counter sees (io_uring), flagged. */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "../runtime/lifecycle.h"
#include "posix_counters.h"

extern const iochar_rw_layout *const iochar_posix_layout;

/* One end of a transfer on a recorded descriptor: a read (dir 0) or write
 * (dir 1) of n bytes at *at (the offset argument's value before the call),
 * or, without one, at the description's offset, which the kernel moved by n.
 * Darshan has no wrappers for these calls; here they count as what they do:
 * the source end is read, the destination end written, each timed with the
 * whole call.  A pipe or socket end has no record and counts nothing. */
static void xfer_end(int fd, int dir, const int64_t *at, ssize_t n, double t0, double t1) {
  iochar_fdesc *d = iochar_fd_get(fd);
  if (!d || n < 0) return;
  iochar_record *r = d->rec;
  int64_t off;
  if (at)
    off = *at;
  else {
    off = atomic_load_explicit(&d->offset, memory_order_relaxed);
    atomic_store_explicit(&d->offset, off + n, memory_order_relaxed);
  }
  iochar_spin_lock(&r->lock);
  r = iochar_record_for_data(d, r); /* a metadata-only entry: its record */
  iochar_rw_account(r, iochar_posix_layout, iochar_rw_state_of(r), dir, off, n, NULL, t0, t1);
  iochar_spin_unlock(&r->lock);
}

static void xfer(int in, const int64_t *in_at, int out, const int64_t *out_at, ssize_t n, double t0,
                 double t1) {
  xfer_end(in, 0, in_at, n, t0, t1);
  xfer_end(out, 1, out_at, n, t0, t1);
}

/* The three share this shape: guard (either end recorded), note the offsets
 * passed in (the call moves them), clock, real call, clock, then xfer with
 * the call's facts.  Whether a call on these two descriptors is recorded: */
static inline int xfer_watched(int in, int out) {
  return (iochar_fd_get(in) || iochar_fd_get(out)) && iochar_active();
}

IOCHAR_WRAP(ssize_t, copy_file_range,
            (int in, off64_t *inp, int out, off64_t *outp, size_t n, unsigned fl)) {
  if (!xfer_watched(in, out)) return IOCHAR_REAL(copy_file_range)(in, inp, out, outp, n, fl);
  int64_t a = inp ? (int64_t)*inp : 0, b = outp ? (int64_t)*outp : 0;
  double t0 = iochar_now();
  ssize_t r = IOCHAR_REAL(copy_file_range)(in, inp, out, outp, n, fl);
  double t1 = iochar_now();
  IOCHAR_RECORD(xfer(in, inp ? &a : NULL, out, outp ? &b : NULL, r, t0, t1));
  return r;
}

IOCHAR_WRAP(ssize_t, splice,
            (int in, off64_t *inp, int out, off64_t *outp, size_t n, unsigned fl)) {
  if (!xfer_watched(in, out)) return IOCHAR_REAL(splice)(in, inp, out, outp, n, fl);
  int64_t a = inp ? (int64_t)*inp : 0, b = outp ? (int64_t)*outp : 0;
  double t0 = iochar_now();
  ssize_t r = IOCHAR_REAL(splice)(in, inp, out, outp, n, fl);
  double t1 = iochar_now();
  IOCHAR_RECORD(xfer(in, inp ? &a : NULL, out, outp ? &b : NULL, r, t0, t1));
  return r;
}

/* sendfile writes at out's own offset; `offp`, when given, is in's. */
IOCHAR_WRAP(ssize_t, sendfile, (int out, int in, off_t *offp, size_t n)) {
  if (!xfer_watched(in, out)) return IOCHAR_REAL(sendfile)(out, in, offp, n);
  int64_t a = offp ? (int64_t)*offp : 0;
  double t0 = iochar_now();
  ssize_t r = IOCHAR_REAL(sendfile)(out, in, offp, n);
  double t1 = iochar_now();
  IOCHAR_RECORD(xfer(in, offp ? &a : NULL, out, NULL, r, t0, t1));
  return r;
}

IOCHAR_WRAP(ssize_t, sendfile64, (int out, int in, off64_t *offp, size_t n)) {
  if (!xfer_watched(in, out)) return IOCHAR_REAL(sendfile64)(out, in, offp, n);
  int64_t a = offp ? (int64_t)*offp : 0;
  double t0 = iochar_now();
  ssize_t r = IOCHAR_REAL(sendfile64)(out, in, offp, n);
  double t1 = iochar_now();
  IOCHAR_RECORD(xfer(in, offp ? &a : NULL, out, NULL, r, t0, t1));
  return r;
}

/* ---- io_uring: invisible to every counter, so the log says it was used --
 * JOB partial bit 32 (docs/log-format.md).  Programs reach it through the
 * raw system call (glibc's syscall()) or liburing, when liburing is a shared
 * library (a static liburing issuing its own system calls is not seen). */
static void uring_used(long ret) {
  if (ret >= 0)
    __atomic_fetch_or(&iochar_job_info.partial, IOCHAR_PARTIAL_IO_URING, __ATOMIC_RELAXED);
}

/* Every argument of a system call fits a long (x86-64, aarch64 ABI). */
IOCHAR_WRAP(long, syscall, (long nr, ...)) {
  va_list ap;
  va_start(ap, nr);
  long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
  long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
  va_end(ap);
  long r = IOCHAR_REAL(syscall)(nr, a, b, c, d, e, f);
  if (nr == SYS_io_uring_setup && iochar_ready) IOCHAR_RECORD(uring_used(r));
  return r;
}

/* liburing's set-up entry points (declared here: no liburing build
 * dependency; their argument types are opaque to us). */
struct io_uring;
struct io_uring_params;
int io_uring_setup(unsigned entries, struct io_uring_params *p);
int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int io_uring_queue_init_params(unsigned entries, struct io_uring *ring, struct io_uring_params *p);
int io_uring_queue_init_mem(unsigned entries, struct io_uring *ring, struct io_uring_params *p,
                            void *buf, size_t size);

IOCHAR_WRAP(int, io_uring_setup, (unsigned n, struct io_uring_params *p)) {
  int r = IOCHAR_REAL(io_uring_setup)(n, p);
  if (iochar_ready) IOCHAR_RECORD(uring_used(r));
  return r;
}
IOCHAR_WRAP(int, io_uring_queue_init, (unsigned n, struct io_uring *ring, unsigned fl)) {
  int r = IOCHAR_REAL(io_uring_queue_init)(n, ring, fl);
  if (iochar_ready) IOCHAR_RECORD(uring_used(r));
  return r;
}
IOCHAR_WRAP(int, io_uring_queue_init_params,
            (unsigned n, struct io_uring *ring, struct io_uring_params *p)) {
  int r = IOCHAR_REAL(io_uring_queue_init_params)(n, ring, p);
  if (iochar_ready) IOCHAR_RECORD(uring_used(r));
  return r;
}
IOCHAR_WRAP(int, io_uring_queue_init_mem,
            (unsigned n, struct io_uring *ring, struct io_uring_params *p, void *buf, size_t sz)) {
  int r = IOCHAR_REAL(io_uring_queue_init_mem)(n, ring, p, buf, sz);
  if (iochar_ready) IOCHAR_RECORD(uring_used(r));
  return r;
}
