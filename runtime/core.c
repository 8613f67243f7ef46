/* What every file of the runtime stands on: the state and guard globals
 * (iochar_ready, iochar_in_tool, the lock flags the fast rule sets), the
 * contended path of the record locks, the job's identity record and the
 * clocks.  The process lifecycle that starts and ends them is
 * runtime/lifecycle.c; the fast rule's bookkeeping runtime/fastrule.c. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

int iochar_ready;
/* Every thread's copy starts biased: its first wrapped call registers it
 * (iochar_thread_enter). */
__thread int iochar_in_tool __attribute__((tls_model("initial-exec"))) = IOCHAR_NEW_THREAD;
struct timespec iochar_mono0;
iochar_job iochar_job_info;
int (*iochar_extra_sections)(struct iochar_buf *out, int *nsections);

static const char always_lock = 0;
const char *iochar_single_threaded_flag = &always_lock;
const char *iochar_fast_flag = &always_lock;
char iochar_fast_mode = 1;

/* The fd table and each module's meta slots (core.h), which the inline
 * lookups read everywhere and the live file's schema writes out;
 * runtime/records.c sets them up. */
_Atomic(iochar_fdesc *) *iochar_fds;
int iochar_fds_max;
uint16_t iochar_meta_count[IOCHAR_MOD_COUNT];
int16_t iochar_meta_slot[IOCHAR_MOD_COUNT][IOCHAR_META_MAX];
int16_t iochar_meta_index[IOCHAR_MOD_COUNT][IOCHAR_META_MAX];

/* A lock held by another thread: spin briefly (the holder only adds a few
 * counters), then give the core away, so that a holder preempted by its own
 * waiters (threads outnumbering cores) gets to run and let go. */
void iochar_spin_wait(iochar_spin *s) {
  int saved = errno; /* callers on the data path do not save it (wrappers/posix_rw.c) */
  for (unsigned n = 1; atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire); n++) {
    if (n % 64)
      __builtin_ia32_pause();
    else
      sched_yield();
  }
  errno = saved;
}

int iochar_use_tsc;
uint64_t iochar_tsc0;
uint64_t iochar_mono0_ns;
double iochar_tsc_scale;

static double mono_diff(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* Use the TSC only when the kernel says it is constant and non-stop; its rate
 * comes from two readings of CLOCK_MONOTONIC, each bracketed by TSC readings
 * (the tightest of a few tries, the reading placed at the bracket's middle,
 * so each end is known to half a bracket, ~5-15 ns here).  The interval
 * lasts until both ends' uncertainty is within CAL_ERROR of it (~90 us
 * here; at most CAL_MAX), instead of a fixed 200 us with unbracketed ends.
 * It starts before the rest of the start-up (iochar_calibrate_begin) and only what
 * remains of it is spent waiting (iochar_calibrate_end): no clock reading is
 * converted before the end, as no wrapper records before iochar_ready. */
#define CAL_ERROR 5e-4 /* relative: 0.05%, a bound (measured: within 0.002%) */
#define CAL_MAX 2e-3   /* seconds: a preempted reading cannot stall start-up */
static struct timespec cal_mono;
static uint64_t cal_tsc, cal_half; /* the begin's TSC reading and half its bracket */
static int cal_on;

#if defined(__x86_64__)
/* CLOCK_MONOTONIC at the middle of the tightest of 4 TSC brackets. */
static void clock_pair(struct timespec *mono, uint64_t *tsc, uint64_t *half) {
  uint64_t best = UINT64_MAX - 2; /* no bracket: an unusable half (callers check) */
  *tsc = 0;
  for (int i = 0; i < 4; i++) {
    struct timespec t;
    __builtin_ia32_lfence();
    uint64_t a = __builtin_ia32_rdtsc();
    __builtin_ia32_lfence();
    clock_gettime(CLOCK_MONOTONIC, &t);
    __builtin_ia32_lfence();
    uint64_t b = __builtin_ia32_rdtsc();
    if (b >= a && b - a < best) best = b - a, *mono = t, *tsc = a + (b - a) / 2;
  }
  *half = best / 2 + 1;
}
#endif

void iochar_calibrate_begin(void) {
#if defined(__x86_64__)
  char flags[8192];
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, flags, sizeof flags - 1);
  close(fd);
  if (n <= 0) return;
  flags[n] = 0;
  if (!strstr(flags, " constant_tsc") || !strstr(flags, " nonstop_tsc")) return;
  clock_pair(&cal_mono, &cal_tsc, &cal_half);
  cal_on = cal_half < UINT64_MAX / 4;
#endif
}

void iochar_calibrate_end(void) {
#if defined(__x86_64__)
  if (!cal_on) return;
  struct timespec b = cal_mono;
  uint64_t t1 = 0, half = 0;
  double dt;
  for (;;) {
    clock_pair(&b, &t1, &half);
    dt = mono_diff(&cal_mono, &b);
    if (t1 <= cal_tsc) return;
    /* the ends' uncertainty in seconds, at the rate measured so far */
    double err = (double)(cal_half + half) * dt / (double)(t1 - cal_tsc);
    if (dt > 0 && (err <= CAL_ERROR * dt || dt >= CAL_MAX)) break;
  }
  iochar_tsc_scale = dt / (double)(t1 - cal_tsc);
  iochar_use_tsc = 1;
#endif
}

void iochar_start_clocks(void) {
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &iochar_mono0);
  iochar_mono0_ns = (uint64_t)iochar_mono0.tv_sec * 1000000000u + (uint64_t)iochar_mono0.tv_nsec;
  /* Readings are converted as (k - tsc0) * scale whichever clock gave them
   * (core.h): without a TSC they are monotonic ns. */
  iochar_tsc0 = iochar_mono0_ns;
  if (!iochar_use_tsc) iochar_tsc_scale = 1e-9;
#if defined(__x86_64__)
  if (iochar_use_tsc) iochar_tsc0 = __builtin_ia32_rdtsc();
#endif
  iochar_job_info.start_wall = (double)wall.tv_sec + wall.tv_nsec * 1e-9;
}
