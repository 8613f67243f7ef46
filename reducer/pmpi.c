/* The PMPI table and its loader (pmpi.h): the real MPI functions the MPI
 * runtime calls, resolved at run time (no libmpi is linked); and the tool's
 * waits on its own collectives. */
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pmpi.h"

#include "../runtime/interpose.h"
#include "../runtime/warn.h"

iochar_pmpi_table iochar_pmpi;

#ifdef OPEN_MPI
iochar_ompi_handles iochar_ompi;

static int load_ompi_handles(void) {
  static const char *const sym[] = {
      "ompi_mpi_comm_world",    "ompi_mpi_comm_null", "ompi_mpi_info_null",
      "ompi_mpi_byte",          "ompi_mpi_int",       "ompi_mpi_double",
      "ompi_mpi_uint64_t",      "ompi_mpi_int64_t",   "ompi_mpi_op_sum",
      "ompi_mpi_op_min",        "ompi_mpi_op_max",    "ompi_mpi_op_bor",
      "ompi_mpi_errors_return", "ompi_request_null",  "ompi_mpi_file_null",
      "ompi_mpi_datatype_null"};
  _Static_assert(sizeof sym / sizeof *sym == sizeof iochar_ompi / sizeof(void *), "handles");
  void **h = (void **)&iochar_ompi;
  int ok = 1;
  for (size_t i = 0; i < sizeof sym / sizeof *sym; i++) {
    h[i] = dlsym(RTLD_DEFAULT, sym[i]);
    ok &= h[i] != NULL;
  }
  if (!ok)
    iochar_warn_once(IOCHAR_WARN_SYMBOL,
                     "cannot find Open MPI's predefined handles; MPI-IO not recorded");
  return ok;
}
#else
static int load_ompi_handles(void) { return 1; }
#endif

int iochar_pmpi_load(void) {
  static int state; /* 0 not tried, 1 ok, -1 missing */
  if (state) return state > 0 ? 0 : -1;
  int ok = load_ompi_handles();
#define LOAD(n)                                                                \
  iochar_pmpi.n = (__typeof__(iochar_pmpi.n))iochar_resolve("PMPI_" #n, NULL); \
  ok &= iochar_pmpi.n != NULL;
  IOCHAR_PMPI_FUNCS(LOAD)
#undef LOAD
  state = ok ? 1 : -1;
  return ok ? 0 : -1;
}

/* How many collectives this rank's shutdown issued, and in how many waits
 * (IOCHAR_TIMING=1 prints them): where ranks outnumber cores each wait costs
 * a scheduling round or more. */
int red_ncoll, red_nwait;

/* A wait yields between polls for SPIN_NS, then sleeps between them, each
 * nap an eighth of the time waited so far and at most NAP_MAX_NS (plus the
 * kernel's timer slack, 50 us by default): a result is seen about 1/8 of the
 * wait late, at most ~150 us. */
#define SPIN_NS 50000
#define NAP_MAX_NS 100000

/* Whether this node's ranks outnumber its online CPUs: the launcher's
 * count of local ranks (MPICH's Hydra, Open MPI), else the job's size.
 * With a core per rank a wait only yields, as a nap would make each of the
 * shutdown's waits up to ~150 us late for nothing (IOR on 2 ranks and 2
 * cores: ~1 ms a run, +1.5%). */
static int outnumbered(void) {
  static int known = -1;
  if (known >= 0) return known;
  const char *v = getenv("MPI_LOCALNRANKS");
  if (!v) v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  long local = v ? strtol(v, NULL, 10) : 0;
  if (local <= 0) {
    int size = 1;
    iochar_pmpi.Comm_size(MPI_COMM_WORLD, &size);
    local = size;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  known = cpus > 0 && local > cpus;
  return known;
}

/* The tool's collectives: nonblocking, completed by polling (reducer/pmpi.h
 * says why).  Where ranks outnumber cores, the ranks still working (building
 * rows, compressing, or still in the application's last barrier) need the
 * cores, and a rank polling with sched_yield alone stays runnable: the
 * scheduler shares each core fairly among its runnable tasks, so with 8
 * ranks on a core a rank still compressing got about an eighth of it.  A
 * sleeping rank is not runnable.  16 ranks x 1,000 files on 2 cores at load
 * 14-20: MPI_Finalize +0.155 s over bare with sched_yield alone, +0.075 s
 * with naps (docs/benchmarks.md).  A collective done within SPIN_NS never
 * naps, nor does any where every rank has a core (outnumbered, above). */
int iochar_coll_waitall(MPI_Request *req, int n) {
  int nap_ok = outnumbered(), left = 0;
  for (int i = 0; i < n; i++) left += req[i] != MPI_REQUEST_NULL;
  red_ncoll += left;
  red_nwait += left > 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    for (int i = 0; i < n; i++) {
      int done = 0;
      if (req[i] == MPI_REQUEST_NULL) continue;
      if (iochar_pmpi.Test(&req[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return MPI_ERR_OTHER;
      left -= done; /* a completed request became MPI_REQUEST_NULL */
    }
    if (!left) return MPI_SUCCESS;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long waited = (t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec);
    if (!nap_ok || waited < SPIN_NS) {
      sched_yield();
      continue;
    }
    struct timespec nap = {0, (long)(waited / 8 < NAP_MAX_NS ? waited / 8 : NAP_MAX_NS)};
    nanosleep(&nap, NULL); /* EINTR: poll again */
  }
}

int iochar_coll_wait(MPI_Request *req) { return iochar_coll_waitall(req, 1); }
