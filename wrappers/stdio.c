/* STDIO interception: streams, buffered data calls, positioning and flushes. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/access.h"
#include "../runtime/interpose.h"
#include "../runtime/lifecycle.h"
#include "../runtime/paths.h"
#include "../runtime/records.h"
#include "stdio_counters.h"

static const iochar_counter_def ints[] = {STDIO_COUNTERS(IOCHAR_DEF_ENTRY)};
static const iochar_counter_def flts[] = {STDIO_F_COUNTERS(IOCHAR_DEF_ENTRY)};

/* A constant, so the inlined accounting folds its lookups (runtime/core.h). */
static const iochar_rw_layout layout = STDIO_RW_LAYOUT;

const iochar_module iochar_mod_stdio =
    IOCHAR_MODULE_DEF(STDIO, ints, flts, iochar_rw_state, &layout);

/* Per-stream state, found through the stream's descriptor (fileno is a plain
 * field read in glibc): an array lookup on the hot path, no hashing. */
typedef struct stream {
  iochar_record *rec;
  FILE *fp;
  int64_t offset; /* guarded by rec->lock */
  double t_last;  /* end of the last timed call, for untimed ones */
  uint32_t untimed;
} stream;

static stream *streams; /* indexed by fd, mapped lazily */
static stream std_streams[3];
#define NSTREAMS (1 << 20)

/* The descriptor of a stream: glibc's field read directly on the hot path. */
static inline int stream_fd(FILE *fp) {
#ifdef __GLIBC__
  return fp->_fileno;
#else
  return fileno(fp);
#endif
}

static inline stream *stream_get(FILE *fp) {
  int fd = fp ? stream_fd(fp) : -1;
  if (fd < 0 || fd >= NSTREAMS) return NULL;
  /* a stream fopen'd (or freopen'd: stdout onto a file) is found first */
  if (streams) {
    stream *s = &streams[fd];
    if (__atomic_load_n(&s->fp, __ATOMIC_ACQUIRE) == fp && s->rec) return s;
  }
  if (fp != stdin && fp != stdout && fp != stderr) return NULL;
  int i = fp == stdin ? 0 : fp == stdout ? 1 : 2;
  stream *s = &std_streams[i];
  if (!__atomic_load_n(&s->rec, __ATOMIC_ACQUIRE)) {
    static const char *const names[] = {"<STDIN>", "<STDOUT>", "<STDERR>"};
    iochar_record *r = iochar_record_get(IOCHAR_MOD_STDIO, names[i]);
    s->fp = fp;
    __atomic_store_n(&s->rec, r, __ATOMIC_RELEASE);
  }
  return s->rec ? s : NULL;
}

int _IO_getc(FILE *);
int _IO_putc(int, FILE *);

/* ---- record steps (called with iochar_in_tool set) ---------------------- */

static void record_open(FILE *fp, const char *path, int fd_in, const char *mode, int is_fdopen,
                        double t0, double t1) {
  int fd = fileno(fp);
  if (fd < 0 || fd >= NSTREAMS) return;
  if (!streams) {
    void *p = mmap(NULL, sizeof(stream) * NSTREAMS, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    if (!__atomic_compare_exchange_n(&streams, &(stream *){NULL}, p, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      munmap(p, sizeof(stream) * NSTREAMS);
  }
  char abs[IOCHAR_PATH_MAX];
  iochar_record *r = NULL;
  if (path) {
    if (iochar_path_resolve(AT_FDCWD, path, abs, sizeof abs) == 0 && !iochar_path_excluded(abs))
      r = iochar_record_get(IOCHAR_MOD_STDIO, abs);
  } else { /* fdopen: name it after what the descriptor is */
    iochar_fdesc *d = iochar_fd_get(fd_in);
    if (d && d->rec) r = iochar_record_get(IOCHAR_MOD_STDIO, iochar_record_path(d->rec));
  }
  stream *s = &streams[fd];
  __atomic_store_n(&s->fp, NULL, __ATOMIC_RELEASE);
  if (!r) return;
  int64_t off = 0;
  if (mode && mode[0] == 'a') {
    struct stat st;
    if (fstat(fd, &st) == 0) off = st.st_size;
  }
  s->rec = r;
  s->offset = off;
  s->t_last = t1;
  s->untimed = 0;
  __atomic_store_n(&s->fp, fp, __ATOMIC_RELEASE);
  iochar_spin_lock(&r->lock);
  r->c[STDIO_OPENS]++;
  if (is_fdopen) r->c[STDIO_FDOPENS]++;
  iochar_rw_open(r, &layout);
  double *f = iochar_rec_f(r, &layout);
  iochar_ts(&f[STDIO_F_OPEN_START_TIMESTAMP], &f[STDIO_F_OPEN_END_TIMESTAMP], t0, t1);
  iochar_meta_account(r, &layout, t0, t1);
  iochar_spin_unlock(&r->lock);
}

static inline __attribute__((always_inline)) void stream_rw(stream *s, int dir, int64_t n,
                                                            double t0, double t1) {
  iochar_record *r = s->rec;
  int saved = errno;
  /* a signal handler's I/O must not wait on our lock; and the bracket (core.h) */
  iochar_fast_enter();
  iochar_spin_lock_in(&r->lock);
  int64_t off = s->offset;
  if (n > 0) s->offset += n;
  iochar_rw_account(r, &layout, iochar_rw_state_of(r), dir, off, n, NULL, t0, t1);
  iochar_spin_unlock_in(&r->lock);
  iochar_fast_leave();
  errno = saved;
}
static __attribute__((noinline)) void record_rw(stream *s, int dir, int64_t n, double t0,
                                                double t1) {
  s->t_last = t1;
  stream_rw(s, dir, n, t0, t1);
}
/* A call served from the stream buffer: counted exactly, stamped with the
 * stream's last timed instant, and adding no time (it costs a memcpy). */
static __attribute__((noinline)) void record_untimed_slow(stream *s, int dir, int64_t n) {
  stream_rw(s, dir, n, s->t_last, s->t_last);
}
/* Inlined: a repeat joins the run in a few instructions, no call. */
static inline __attribute__((always_inline)) void record_untimed(stream *s, int dir, int64_t n) {
  iochar_record *r = s->rec;
  iochar_fast_enter(); /* the guard's increment, and the bracket (core.h) */
  iochar_spin_lock_in(&r->lock);
  int deferred = iochar_rw_defer(iochar_rw_state_of(r), dir, s->offset, n, s->t_last);
  if (deferred) s->offset += n;
  iochar_spin_unlock_in(&r->lock);
  iochar_fast_leave();
  if (!deferred) record_untimed_slow(s, dir, n);
}

/* glibc FILE flag bits (stable ABI, from libio.h, not installed). */
#define FL_UNBUFFERED 0x0002
#define FL_LINE_BUF 0x0200
#define FL_PUTTING 0x0800

/* Will this call be served from the stream buffer, without a system call?
 * Then it is not timed, except 1 in 64, which keeps timestamps fresh. */
static inline int buffered(stream *s, FILE *fp, int dir, size_t n) {
#ifdef __GLIBC__
  int fl = fp->_flags;
  int ok = dir ? !(fl & (FL_UNBUFFERED | FL_LINE_BUF)) && (fl & FL_PUTTING) &&
                     (size_t)(fp->_IO_write_end - fp->_IO_write_ptr) > n
               : !(fl & (FL_UNBUFFERED | FL_PUTTING)) &&
                     (size_t)(fp->_IO_read_end - fp->_IO_read_ptr) >= n;
  return ok && (++s->untimed & 63);
#else
  (void)s, (void)fp, (void)dir, (void)n;
  return 0;
#endif
}

/* fgets: buffered when the buffer already holds the end of the line. */
static inline int buffered_line(stream *s, FILE *fp, int n) {
#ifdef __GLIBC__
  size_t avail = (size_t)(fp->_IO_read_end - fp->_IO_read_ptr);
  if (n <= 1 || (fp->_flags & (FL_UNBUFFERED | FL_PUTTING))) return 0;
  if (avail >= (size_t)n - 1 || memchr(fp->_IO_read_ptr, '\n', avail)) return ++s->untimed & 63;
#else
  (void)s, (void)fp, (void)n;
#endif
  return 0;
}

static void record_meta(stream *s, int idx, double t0, double t1) {
  iochar_record *r = s->rec;
  iochar_meta_event(r, &layout, idx, -1, -1, t0, t1);
}

static void record_seek(stream *s, FILE *fp, double t0, double t1) {
  long pos = ftello(fp);
  iochar_spin_lock(&s->rec->lock);
  if (pos >= 0) s->offset = pos;
  iochar_spin_unlock(&s->rec->lock);
  record_meta(s, STDIO_SEEKS, t0, t1);
}

static void record_close(stream *s, double t0, double t1) {
  iochar_record *r = s->rec;
  iochar_meta_event(r, &layout, -1, STDIO_F_CLOSE_START_TIMESTAMP, STDIO_F_CLOSE_END_TIMESTAMP, t0,
                    t1);
  if (s >= std_streams && s < std_streams + 3) return;
  __atomic_store_n(&s->fp, NULL, __ATOMIC_RELEASE);
}

/* ---- open and close ----------------------------------------------------- */

typedef FILE *(*fopen_fn)(const char *, const char *);
static inline FILE *fopen_body(fopen_fn real, const char *path, const char *mode) {
  if (!iochar_active()) return real(path, mode);
  double t0 = iochar_now();
  FILE *fp = real(path, mode);
  double t1 = iochar_now();
  if (fp) IOCHAR_RECORD(record_open(fp, path, -1, mode, 0, t0, t1));
  return fp;
}
IOCHAR_WRAP(FILE *, fopen, (const char *path, const char *mode)) {
  return fopen_body(IOCHAR_REAL(fopen), path, mode);
}
IOCHAR_WRAP(FILE *, fopen64, (const char *path, const char *mode)) {
  return fopen_body(IOCHAR_REAL(fopen64), path, mode);
}

IOCHAR_WRAP(FILE *, fdopen, (int fd, const char *mode)) {
  if (!iochar_active()) return IOCHAR_REAL(fdopen)(fd, mode);
  double t0 = iochar_now();
  FILE *fp = IOCHAR_REAL(fdopen)(fd, mode);
  double t1 = iochar_now();
  if (fp) IOCHAR_RECORD(record_open(fp, NULL, fd, mode, 1, t0, t1));
  return fp;
}

/* freopen: the old stream's record is closed, the new path's opened. */
typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);
static inline FILE *freopen_body(freopen_fn real, const char *path, const char *mode, FILE *old) {
  if (!iochar_active()) return real(path, mode, old);
  stream *s = stream_get(old);
  double t0 = iochar_now();
  FILE *fp = real(path, mode, old);
  double t1 = iochar_now();
  IOCHAR_RECORD({
    if (s) record_close(s, t0, t1);
    if (fp && path) record_open(fp, path, -1, mode, 0, t0, t1);
  });
  return fp;
}
IOCHAR_WRAP(FILE *, freopen, (const char *path, const char *mode, FILE *old)) {
  return freopen_body(IOCHAR_REAL(freopen), path, mode, old);
}
IOCHAR_WRAP(FILE *, freopen64, (const char *path, const char *mode, FILE *old)) {
  return freopen_body(IOCHAR_REAL(freopen64), path, mode, old);
}

IOCHAR_WRAP(int, fclose, (FILE * fp)) {
  stream *s = iochar_active() ? stream_get(fp) : NULL;
  int fd = fp ? fileno(fp) : -1;
  /* fclose closes the descriptor inside libc, past the POSIX wrapper. */
  int own = !iochar_in_vfork_child();
  if (fd >= 0 && own) iochar_fd_clear(fd);
  if (!s) {
    if (own && streams && fd >= 0 && fd < NSTREAMS && streams[fd].fp == fp)
      __atomic_store_n(&streams[fd].fp, NULL, __ATOMIC_RELEASE);
    return IOCHAR_REAL(fclose)(fp);
  }
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fclose)(fp);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_close(s, t0, t1));
  return r;
}

/* ---- data --------------------------------------------------------------- */

/* Every data wrapper: the stream's state when this call is recorded (NULL:
 * pass straight through); then, unless the call is predicted to stay in the
 * stream's buffer (no clock for those), clock, real call, clock; then the
 * bytes the call moved (record_data). */
static inline stream *stdio_stream(FILE *fp) { return iochar_active() ? stream_get(fp) : NULL; }
static inline void record_data(stream *s, int dir, int64_t bytes, int timed, double t0, double t1) {
  if (timed)
    record_rw(s, dir, bytes, t0, t1);
  else
    record_untimed(s, dir, bytes);
}

/* Formatted output: assume no flush when 256 bytes of buffer are free. */
#define FMT_ROOM 256

/* One body per call shape, an inline function taking the real function and
 * the call's arguments; the plain, glibc-internal (_IO_*) and *_unlocked (the
 * caller holds the stream lock, or knows it has one thread) names of a shape
 * each call it.  The hot ones (fread, fwrite, getc, putc) are always inlined
 * so each exported function is one straight body.  <stdio.h> may inline
 * getc_unlocked/putc_unlocked, which then reach no library function while
 * the stream buffer lasts: only their out-of-line calls are seen. */
#undef fread_unlocked /* <stdio.h> may define these two as macros */
#undef fwrite_unlocked

typedef size_t (*fread_fn)(void *, size_t, size_t, FILE *);
static inline __attribute__((always_inline)) size_t fread_body(fread_fn real, void *p, size_t sz,
                                                               size_t n, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(p, sz, n, fp);
  int timed = !(buffered(s, fp, 0, sz * n));
  double t0 = timed ? iochar_now() : 0;
  size_t ret = real(p, sz, n, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, (int64_t)(ret * sz), timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(size_t, fread, (void *p, size_t sz, size_t n, FILE *fp)) {
  return fread_body(IOCHAR_REAL(fread), p, sz, n, fp);
}
IOCHAR_WRAP(size_t, fread_unlocked, (void *p, size_t sz, size_t n, FILE *fp)) {
  return fread_body(IOCHAR_REAL(fread_unlocked), p, sz, n, fp);
}

typedef size_t (*fwrite_fn)(const void *, size_t, size_t, FILE *);
static inline __attribute__((always_inline)) size_t fwrite_body(fwrite_fn real, const void *p,
                                                                size_t sz, size_t n, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(p, sz, n, fp);
  int timed = !(buffered(s, fp, 1, sz * n));
  double t0 = timed ? iochar_now() : 0;
  size_t ret = real(p, sz, n, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, (int64_t)(ret * sz), timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(size_t, fwrite, (const void *p, size_t sz, size_t n, FILE *fp)) {
  return fwrite_body(IOCHAR_REAL(fwrite), p, sz, n, fp);
}
IOCHAR_WRAP(size_t, fwrite_unlocked, (const void *p, size_t sz, size_t n, FILE *fp)) {
  return fwrite_body(IOCHAR_REAL(fwrite_unlocked), p, sz, n, fp);
}

/* getc and getchar: one byte in (none at EOF). */
typedef int (*getc_fn)(FILE *);
static inline __attribute__((always_inline)) int getc_body(getc_fn real, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(fp);
  int timed = !(buffered(s, fp, 0, 1));
  double t0 = timed ? iochar_now() : 0;
  int ret = real(fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, ret == EOF ? 0 : 1, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fgetc, (FILE * fp)) { return getc_body(IOCHAR_REAL(fgetc), fp); }
IOCHAR_WRAP(int, getc, (FILE * fp)) { return getc_body(IOCHAR_REAL(getc), fp); }
IOCHAR_WRAP(int, _IO_getc, (FILE * fp)) { return getc_body(IOCHAR_REAL(_IO_getc), fp); }
IOCHAR_WRAP(int, fgetc_unlocked, (FILE * fp)) { return getc_body(IOCHAR_REAL(fgetc_unlocked), fp); }
IOCHAR_WRAP(int, getc_unlocked, (FILE * fp)) { return getc_body(IOCHAR_REAL(getc_unlocked), fp); }

typedef int (*getchar_fn)(void);
static inline int getchar_body(getchar_fn real) {
  stream *s = stdio_stream(stdin);
  if (!s) return real();
  int timed = !(buffered(s, stdin, 0, 1));
  double t0 = timed ? iochar_now() : 0;
  int ret = real();
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, ret == EOF ? 0 : 1, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, getchar, (void)) { return getchar_body(IOCHAR_REAL(getchar)); }
IOCHAR_WRAP(int, getchar_unlocked, (void)) { return getchar_body(IOCHAR_REAL(getchar_unlocked)); }

/* putc and putchar: one byte out (an error: -1, counted as a failed write). */
typedef int (*putc_fn)(int, FILE *);
static inline __attribute__((always_inline)) int putc_body(putc_fn real, int c, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(c, fp);
  int timed = !(buffered(s, fp, 1, 1));
  double t0 = timed ? iochar_now() : 0;
  int ret = real(c, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret == EOF ? -1 : 1, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fputc, (int c, FILE *fp)) { return putc_body(IOCHAR_REAL(fputc), c, fp); }
IOCHAR_WRAP(int, putc, (int c, FILE *fp)) { return putc_body(IOCHAR_REAL(putc), c, fp); }
IOCHAR_WRAP(int, _IO_putc, (int c, FILE *fp)) { return putc_body(IOCHAR_REAL(_IO_putc), c, fp); }
IOCHAR_WRAP(int, fputc_unlocked, (int c, FILE *fp)) {
  return putc_body(IOCHAR_REAL(fputc_unlocked), c, fp);
}
IOCHAR_WRAP(int, putc_unlocked, (int c, FILE *fp)) {
  return putc_body(IOCHAR_REAL(putc_unlocked), c, fp);
}

typedef int (*putchar_fn)(int);
static inline int putchar_body(putchar_fn real, int c) {
  stream *s = stdio_stream(stdout);
  if (!s) return real(c);
  int timed = !(buffered(s, stdout, 1, 1));
  double t0 = timed ? iochar_now() : 0;
  int ret = real(c);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret == EOF ? -1 : 1, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, putchar, (int c)) { return putchar_body(IOCHAR_REAL(putchar), c); }
IOCHAR_WRAP(int, putchar_unlocked, (int c)) {
  return putchar_body(IOCHAR_REAL(putchar_unlocked), c);
}

/* fgets: the bytes read are the string's length (the NUL is not read). */
typedef char *(*fgets_fn)(char *, int, FILE *);
static inline char *fgets_body(fgets_fn real, char *buf, int n, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(buf, n, fp);
  int timed = !(buffered_line(s, fp, n));
  double t0 = timed ? iochar_now() : 0;
  char *ret = real(buf, n, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, ret ? (int64_t)strlen(buf) : 0, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(char *, fgets, (char *buf, int n, FILE *fp)) {
  return fgets_body(IOCHAR_REAL(fgets), buf, n, fp);
}
IOCHAR_WRAP(char *, fgets_unlocked, (char *buf, int n, FILE *fp)) {
  return fgets_body(IOCHAR_REAL(fgets_unlocked), buf, n, fp);
}

typedef int (*fputs_fn)(const char *, FILE *);
static inline int fputs_body(fputs_fn real, const char *str, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(str, fp);
  int timed = !(buffered(s, fp, 1, strlen(str)));
  double t0 = timed ? iochar_now() : 0;
  int ret = real(str, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret == EOF ? -1 : (int64_t)strlen(str), timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fputs, (const char *str, FILE *fp)) {
  return fputs_body(IOCHAR_REAL(fputs), str, fp);
}
IOCHAR_WRAP(int, fputs_unlocked, (const char *str, FILE *fp)) {
  return fputs_body(IOCHAR_REAL(fputs_unlocked), str, fp);
}

IOCHAR_WRAP(int, getw, (FILE * fp)) {
  stream *s = stdio_stream(fp);
  if (!s) return IOCHAR_REAL(getw)(fp);
  int timed = !(buffered(s, fp, 0, sizeof(int)));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(getw)(fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, ferror(fp) || feof(fp) ? 0 : (int64_t)sizeof(int), timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, putw, (int w, FILE *fp)) {
  stream *s = stdio_stream(fp);
  if (!s) return IOCHAR_REAL(putw)(w, fp);
  int timed = !(buffered(s, fp, 1, sizeof(int)));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(putw)(w, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret == EOF ? -1 : (int64_t)sizeof(int), timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, puts, (const char *str)) {
  stream *s = stdio_stream(stdout);
  if (!s) return IOCHAR_REAL(puts)(str);
  int timed = !(buffered(s, stdout, 1, strlen(str) + 1));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(puts)(str);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret == EOF ? -1 : (int64_t)strlen(str) + 1, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, vfprintf, (FILE * fp, const char *fmt, va_list ap)) {
  stream *s = stdio_stream(fp);
  if (!s) return IOCHAR_REAL(vfprintf)(fp, fmt, ap);
  int timed = !(buffered(s, fp, 1, FMT_ROOM));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(vfprintf)(fp, fmt, ap);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, vprintf, (const char *fmt, va_list ap)) {
  stream *s = stdio_stream(stdout);
  if (!s) return IOCHAR_REAL(vprintf)(fmt, ap);
  int timed = !(buffered(s, stdout, 1, FMT_ROOM));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(vprintf)(fmt, ap);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret, timed, t0, t1);
  return ret;
}

/* Variadic forms: one body for fprintf, printf and their checked forms; each
 * calls libc's v-form directly (our v-wrappers would count twice). */
typedef int (*vfmt_fn)(FILE *, int, const char *, va_list);
static int plain_vfprintf(FILE *fp, int flag, const char *fmt, va_list ap) {
  (void)flag;
  return IOCHAR_REAL(vfprintf)(fp, fmt, ap);
}
int __vfprintf_chk(FILE *, int, const char *, va_list);
static int checked_vfprintf(FILE *fp, int flag, const char *fmt, va_list ap) {
  static vfmt_fn real;
  if (!real) real = (vfmt_fn)iochar_resolve("__vfprintf_chk", NULL);
  return real(fp, flag, fmt, ap);
}
static int fmt_out(vfmt_fn out, FILE *fp, int flag, const char *fmt, va_list ap) {
  stream *s = iochar_active() ? stream_get(fp) : NULL;
  int untimed = s && buffered(s, fp, 1, FMT_ROOM);
  double t0 = s && !untimed ? iochar_now() : 0;
  int ret = out(fp, flag, fmt, ap);
  if (untimed)
    record_untimed(s, 1, ret);
  else if (s)
    record_rw(s, 1, ret, t0, iochar_now());
  return ret;
}
__attribute__((visibility("default"))) int fprintf(FILE *fp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = fmt_out(plain_vfprintf, fp, 0, fmt, ap);
  va_end(ap);
  return r;
}
__attribute__((visibility("default"))) int printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = fmt_out(plain_vfprintf, stdout, 0, fmt, ap);
  va_end(ap);
  return r;
}
int __fprintf_chk(FILE *, int, const char *, ...);
int __printf_chk(int, const char *, ...);
__attribute__((visibility("default"))) int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = fmt_out(checked_vfprintf, fp, flag, fmt, ap);
  va_end(ap);
  return r;
}
__attribute__((visibility("default"))) int __printf_chk(int flag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = fmt_out(checked_vfprintf, stdout, flag, fmt, ap);
  va_end(ap);
  return r;
}

/* fscanf family: the bytes consumed are the change of the stream position. */
typedef int (*vscan_fn)(FILE *, const char *, va_list);
static int scan_common(vscan_fn real, FILE *fp, const char *fmt, va_list ap) {
  stream *s = iochar_active() ? stream_get(fp) : NULL;
  if (!s) return real(fp, fmt, ap);
  long before, after;
  IOCHAR_RECORD(before = ftell(fp));
  double t0 = iochar_now();
  int ret = real(fp, fmt, ap);
  double t1 = iochar_now();
  IOCHAR_RECORD({
    after = ftell(fp);
    record_rw(s, 0, before >= 0 && after >= before ? after - before : 0, t0, t1);
  });
  return ret;
}
/* glibc's headers rename the scanf family to __isoc99_*, so the exported
 * names are given explicitly (asm labels); each resolves its own real
 * function. */
int wrap_vfscanf(FILE *, const char *, va_list) __asm__("vfscanf");
int wrap_isoc99_vfscanf(FILE *, const char *, va_list) __asm__("__isoc99_vfscanf");
int wrap_fscanf(FILE *, const char *, ...) __asm__("fscanf");
int wrap_isoc99_fscanf(FILE *, const char *, ...) __asm__("__isoc99_fscanf");

__attribute__((visibility("default"))) int wrap_vfscanf(FILE *fp, const char *fmt, va_list ap) {
  static vscan_fn real;
  if (!real) real = (vscan_fn)iochar_resolve("vfscanf", (const void *)wrap_vfscanf);
  return scan_common(real, fp, fmt, ap);
}
__attribute__((visibility("default"))) int wrap_isoc99_vfscanf(FILE *fp, const char *fmt,
                                                               va_list ap) {
  static vscan_fn real;
  if (!real) real = (vscan_fn)iochar_resolve("__isoc99_vfscanf", (const void *)wrap_isoc99_vfscanf);
  return scan_common(real, fp, fmt, ap);
}
/* The variadic forms call libc's v-form directly (ours would count twice). */
__attribute__((visibility("default"))) int wrap_fscanf(FILE *fp, const char *fmt, ...) {
  static vscan_fn real;
  if (!real) real = (vscan_fn)iochar_resolve("vfscanf", NULL);
  va_list ap;
  va_start(ap, fmt);
  int r = scan_common(real, fp, fmt, ap);
  va_end(ap);
  return r;
}
__attribute__((visibility("default"))) int wrap_isoc99_fscanf(FILE *fp, const char *fmt, ...) {
  static vscan_fn real;
  if (!real) real = (vscan_fn)iochar_resolve("__isoc99_vfscanf", NULL);
  va_list ap;
  va_start(ap, fmt);
  int r = scan_common(real, fp, fmt, ap);
  va_end(ap);
  return r;
}

/* ---- positioning and flushing ------------------------------------------- */

/* The seeks: the stream's position is read back after one that succeeded. */
static inline stream *seek_stream(FILE *fp) { return iochar_active() ? stream_get(fp) : NULL; }
static inline void seek_done(stream *s, FILE *fp, int ret, double t0, double t1) {
  if (ret == 0) IOCHAR_RECORD(record_seek(s, fp, t0, t1));
}
IOCHAR_WRAP(int, fseek, (FILE * fp, long off, int wh)) {
  stream *s = seek_stream(fp);
  if (!s) return IOCHAR_REAL(fseek)(fp, off, wh);
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(fseek)(fp, off, wh);
  double t1 = iochar_now();
  seek_done(s, fp, ret, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fseeko, (FILE * fp, off_t off, int wh)) {
  stream *s = seek_stream(fp);
  if (!s) return IOCHAR_REAL(fseeko)(fp, off, wh);
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(fseeko)(fp, off, wh);
  double t1 = iochar_now();
  seek_done(s, fp, ret, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fseeko64, (FILE * fp, off64_t off, int wh)) {
  stream *s = seek_stream(fp);
  if (!s) return IOCHAR_REAL(fseeko64)(fp, off, wh);
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(fseeko64)(fp, off, wh);
  double t1 = iochar_now();
  seek_done(s, fp, ret, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fsetpos, (FILE * fp, const fpos_t *pos)) {
  stream *s = seek_stream(fp);
  if (!s) return IOCHAR_REAL(fsetpos)(fp, pos);
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(fsetpos)(fp, pos);
  double t1 = iochar_now();
  seek_done(s, fp, ret, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, fsetpos64, (FILE * fp, const fpos64_t *pos)) {
  stream *s = seek_stream(fp);
  if (!s) return IOCHAR_REAL(fsetpos64)(fp, pos);
  double t0 = iochar_now();
  int ret = IOCHAR_REAL(fsetpos64)(fp, pos);
  double t1 = iochar_now();
  seek_done(s, fp, ret, t0, t1);
  return ret;
}

IOCHAR_WRAP(void, rewind, (FILE * fp)) {
  stream *s = iochar_active() ? stream_get(fp) : NULL;
  if (!s) {
    IOCHAR_REAL(rewind)(fp);
    return;
  }
  double t0 = iochar_now();
  IOCHAR_REAL(rewind)(fp);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_seek(s, fp, t0, t1));
}

/* ftell is answered from the stream; counted as metadata time only. */
IOCHAR_WRAP(long, ftell, (FILE * fp)) {
  stream *s = iochar_active() ? stream_get(fp) : NULL;
  if (!s) return IOCHAR_REAL(ftell)(fp);
  double t0 = iochar_now();
  long r = IOCHAR_REAL(ftell)(fp);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(s, -1, t0, t1));
  return r;
}

IOCHAR_WRAP(int, fflush, (FILE * fp)) {
  stream *s = iochar_active() && fp ? stream_get(fp) : NULL;
  if (!s) return IOCHAR_REAL(fflush)(fp);
  double t0 = iochar_now();
  int r = IOCHAR_REAL(fflush)(fp);
  double t1 = iochar_now();
  IOCHAR_RECORD(record_meta(s, STDIO_FLUSHES, t0, t1));
  return r;
}

/* ---- fortified entry points --------------------------------------------- */
/* -D_FORTIFY_SOURCE builds call glibc's checked variants; each forwards to the
 * real checked function, so the checks stay. */
int __vprintf_chk(int, const char *, va_list);
size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);
char *__fgets_chk(char *, size_t, int, FILE *);
size_t __fread_unlocked_chk(void *, size_t, size_t, size_t, FILE *);
char *__fgets_unlocked_chk(char *, size_t, int, FILE *);

IOCHAR_WRAP(int, __vfprintf_chk, (FILE * fp, int flag, const char *fmt, va_list ap)) {
  stream *s = stdio_stream(fp);
  if (!s) return IOCHAR_REAL(__vfprintf_chk)(fp, flag, fmt, ap);
  int timed = !(buffered(s, fp, 1, FMT_ROOM));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(__vfprintf_chk)(fp, flag, fmt, ap);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(int, __vprintf_chk, (int flag, const char *fmt, va_list ap)) {
  stream *s = stdio_stream(stdout);
  if (!s) return IOCHAR_REAL(__vprintf_chk)(flag, fmt, ap);
  int timed = !(buffered(s, stdout, 1, FMT_ROOM));
  double t0 = timed ? iochar_now() : 0;
  int ret = IOCHAR_REAL(__vprintf_chk)(flag, fmt, ap);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 1, ret, timed, t0, t1);
  return ret;
}
typedef size_t (*fread_chk_fn)(void *, size_t, size_t, size_t, FILE *);
static inline size_t fread_chk_body(fread_chk_fn real, void *p, size_t plen, size_t sz, size_t n,
                                    FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(p, plen, sz, n, fp);
  int timed = !(buffered(s, fp, 0, sz * n));
  double t0 = timed ? iochar_now() : 0;
  size_t ret = real(p, plen, sz, n, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, (int64_t)(ret * sz), timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(size_t, __fread_chk, (void *p, size_t plen, size_t sz, size_t n, FILE *fp)) {
  return fread_chk_body(IOCHAR_REAL(__fread_chk), p, plen, sz, n, fp);
}
IOCHAR_WRAP(size_t, __fread_unlocked_chk, (void *p, size_t plen, size_t sz, size_t n, FILE *fp)) {
  return fread_chk_body(IOCHAR_REAL(__fread_unlocked_chk), p, plen, sz, n, fp);
}

typedef char *(*fgets_chk_fn)(char *, size_t, int, FILE *);
static inline char *fgets_chk_body(fgets_chk_fn real, char *buf, size_t blen, int n, FILE *fp) {
  stream *s = stdio_stream(fp);
  if (!s) return real(buf, blen, n, fp);
  int timed = !(buffered_line(s, fp, n));
  double t0 = timed ? iochar_now() : 0;
  char *ret = real(buf, blen, n, fp);
  double t1 = timed ? iochar_now() : 0;
  record_data(s, 0, ret ? (int64_t)strlen(buf) : 0, timed, t0, t1);
  return ret;
}
IOCHAR_WRAP(char *, __fgets_chk, (char *buf, size_t blen, int n, FILE *fp)) {
  return fgets_chk_body(IOCHAR_REAL(__fgets_chk), buf, blen, n, fp);
}
IOCHAR_WRAP(char *, __fgets_unlocked_chk, (char *buf, size_t blen, int n, FILE *fp)) {
  return fgets_chk_body(IOCHAR_REAL(__fgets_unlocked_chk), buf, blen, n, fp);
}
