/* The process's MPI lifecycle (MPI_Init: rank, size, the job's log name;
 * MPI_Finalize: the reduced log; MPI_Abort: this rank's log), at the top of
 * the MPI runtime (the PMPI table: reducer/pmpi.c).  The MPI-IO wrappers
 * (wrappers/mpiio*.c) stand on it; nothing here knows about them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../runtime/config.h"
#include "../runtime/fastrule.h"
#include "../runtime/lifecycle.h"
#include "../runtime/live.h"
#include "../runtime/reap.h"
#include "../runtime/records.h"
#include "../runtime/warn.h"
#include "mpi_wrap.h"
#include "reduce.h"

/* ---- init and finalize ---------------------------------------------------- */

static void after_init(int ret) {
  iochar_job *j = &iochar_job_info;
  if (ret != MPI_SUCCESS || iochar_cfg.disabled || !iochar_ready || iochar_pmpi_load()) return;
  iochar_pmpi.Comm_rank(MPI_COMM_WORLD, &j->rank);
  iochar_pmpi.Comm_size(MPI_COMM_WORLD, &j->nprocs);
  iochar_warn_set_rank(j->rank); /* launchers that set no rank variable */
  iochar_rank_known(j->rank);    /* issue 41: IOCHAR_RANKS by the MPI rank */
  int len = 0;
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  if (iochar_pmpi.Get_library_version(v, &len) == MPI_SUCCESS) {
    v[len < (int)sizeof v ? len : (int)sizeof v - 1] = 0;
    char *nl = strchr(v, '\n');
    if (nl) *nl = 0;
    size_t n = strlen(v) < sizeof j->mpi_version ? strlen(v) : sizeof j->mpi_version - 1;
    memcpy(j->mpi_version, v, n);
    j->mpi_version[n] = 0;
  }
  /* One log name per job: every rank's (fallback logs too) carries rank 0's pid. */
  int pid = j->log_pid;
  iochar_pmpi.Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  j->log_pid = pid;
  if (!iochar_cfg.batch_jobid)
    snprintf(j->jobid, sizeof j->jobid, "%d", pid); /* no batch id: rank 0's pid */
  j->mpi_initialized = 1;
  iochar_records_live_now(); /* a rank killed from here on leaves its counters */
  /* A job that leaves without MPI_Finalize writes per-rank logs: at exit,
   * before handlers the application registered before MPI_Init (a crash
   * handler may synchronise there) and long before the library destructors. */
  atexit(iochar_shutdown);
}

MPI_WRAP(int, MPI_Init, (int *argc, char ***argv)) {
  iochar_in_tool++; /* the MPI library's own start-up I/O is not the app's */
  int ret = PREAL(MPI_Init)(argc, argv);
  iochar_in_tool--;
  IOCHAR_RECORD(after_init(ret));
  return ret;
}

MPI_WRAP(int, MPI_Init_thread, (int *argc, char ***argv, int req, int *prov)) {
  iochar_in_tool++; /* the MPI library's own start-up I/O is not the app's */
  int ret = PREAL(MPI_Init_thread)(argc, argv, req, prov);
  iochar_in_tool--;
  IOCHAR_RECORD(after_init(ret));
  return ret;
}

MPI_WRAP(int, MPI_Finalize, (void)) {
  if (iochar_job_info.mpi_initialized && !iochar_job_info.written) {
    iochar_enter(); /* it reads every record: another thread may own the fast mode (core.h) */
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    iochar_live_finishing((double)t.tv_sec + t.tv_nsec * 1e-9); /* no more of the app's I/O */
    iochar_reap_at_end(); /* its ended children's live files: their logs (runtime/reap.c) */
    IOCHAR_RECORD(if (iochar_mpi_reduce_and_write() == 0) iochar_live_done());
  }
  return PREAL(MPI_Finalize)();
}

/* The calling rank writes its own log; the launcher kills the others, whose
 * live files keep their counters (the reader names the ranks it lacks). */
MPI_WRAP(int, MPI_Abort, (MPI_Comm comm, int errorcode)) {
  if (iochar_job_info.mpi_initialized && !iochar_job_info.written)
    IOCHAR_RECORD(iochar_abort_log(errorcode));
  return PREAL(MPI_Abort)(comm, errorcode);
}
