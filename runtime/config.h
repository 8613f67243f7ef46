/* Run-time configuration read once from the IOCHAR_* settings: the environment,
 * then IOCHAR_CONFIG's file, then the site file, then the build default. */
#ifndef IOCHAR_CONFIG_H
#define IOCHAR_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define IOCHAR_MAX_PREFIXES 64

typedef struct iochar_config {
  int disabled;
  const char *logfile; /* IOCHAR_LOGFILE */
  const char *logdir;  /* IOCHAR_LOGDIR */
  const char *logroot; /* IOCHAR_LOGROOT: logs in ROOT/YYYY/M/D/ (no LOGFILE, LOGDIR) */
  const char *livedir; /* IOCHAR_LIVEDIR: node-local home of the live files */
  uint64_t memory;     /* IOCHAR_MEMORY, bytes */
  /* The batch system's job id (IOCHAR_JOBID_ENV's variable, SLURM_JOB_ID,
   * PBS_JOBID, LSB_JOBID, FLUX_JOB_ID: the first
   * set), NULL outside a batch job. */
  const char *batch_jobid;
  const char *jobid_env;  /* IOCHAR_JOBID_ENV: the variable holding the job id */
  int timing;             /* IOCHAR_TIMING=1: the MPI shutdown's phase times */
  int collective_write;   /* IOCHAR_COLLECTIVE_WRITE: 1 / 0, -1 by the rank count */
  const char *test_fault; /* IOCHAR_TEST_FAULT=phase:rank (tests of the fallback) */
  int nexclude, ninclude;
  const char *exclude[IOCHAR_MAX_PREFIXES];
  size_t exclude_len[IOCHAR_MAX_PREFIXES];
  const char *include[IOCHAR_MAX_PREFIXES];
  size_t include_len[IOCHAR_MAX_PREFIXES];
  /* ---- issue 41: the site's knobs (README, docs/deploying.md) ---- */
  /* IOCHAR_MODULES / IOCHAR_DISABLE_MODULES: bit m set, module m makes no
   * record (iochar_record_get gives NULL: its wrappers pass straight through) */
  uint32_t modules_off;
  /* IOCHAR_MAX_RECORDS: records (and metadata-only entries) per module per
   * process; past it, files fold into the aggregate record.  0: no limit */
  uint64_t max_records;
  /* IOCHAR_RANKS / IOCHAR_RANKS_EXCLUDE as given (NULL: unset) */
  const char *ranks, *ranks_exclude;
  /* ---- end of issue 41's knobs ---- */
} iochar_config;

extern iochar_config iochar_cfg;

/* The environment the rest of the runtime needs: what warnings need, read
 * once by iochar_config_env() before anything else, and the settings below
 * (from every layer) by iochar_config_load(); no file but config.c calls
 * getenv. */
typedef struct iochar_env {
  int launcher_rank;            /* PMI_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID */
  const char *user;             /* USER, else LOGNAME; NULL when neither is set */
  int live_off;                 /* IOCHAR_LIVE=0 */
  int callsites, trace;         /* IOCHAR_CALLSITES, IOCHAR_TRACE: set and not "0" */
  const char *callsites_sample; /* IOCHAR_CALLSITES_SAMPLE: 1..65535 */
  const char *trace_memory;     /* IOCHAR_TRACE_MEMORY: a size */
  const char *exclude_pattern;  /* IOCHAR_EXCLUDE_PATTERN */
  const char *python_trees[2];  /* VIRTUAL_ENV, CONDA_PREFIX */
} iochar_env;
extern iochar_env iochar_envs;
void iochar_config_env(void);

#define IOCHAR_DEFAULT_MEMORY (32u << 20) /* ~20,000 POSIX files */

/* Read the settings (the files after IOCHAR_DISABLE and our own tools are
 * ruled out); one warning for a file's lines it cannot use and one for a
 * value it ignores.  Returns 0, or -1 when the tool must stay off. */
int iochar_config_load(void);
/* A setting's value as the runtime sees it (every layer), NULL when unset:
 * exported so the report tools in a process the library is preloaded into
 * find the live directory the site file names. */
__attribute__((visibility("default"))) const char *iochar_setting(const char *name);
/* "16m" / "2g" / "4096"; returns 0 on a malformed value. */
uint64_t iochar_parse_size(const char *s);
/* issue 41: IOCHAR_APP_INCLUDE / IOCHAR_APP_EXCLUDE against the program (the
 * executable's base name, and an interpreter's script or -m module): 1 when
 * it is excluded, then iochar_cfg.disabled is set (intercept nothing, write
 * nothing).  After iochar_config_load. */
int iochar_app_excluded(const char *exe_basename);
/* issue 41: 1 when IOCHAR_RANKS / IOCHAR_RANKS_EXCLUDE keep rank r's records. */
int iochar_rank_kept(int64_t r);
/* This process is rank r (the launcher's at start, MPI_Init's): a rank whose
 * records are not kept makes none from now on (iochar_cfg.modules_off). */
void iochar_rank_known(int64_t r);
/* The ranks of [0, nprocs) kept, as "0-3,8" into out (cut with "..." when
 * longer); 0 when every rank is kept (nothing written), else 1. */
int iochar_ranks_kept_text(int64_t nprocs, char *out, size_t outlen);
/* The disabled modules' names, comma-separated (empty: none). */
void iochar_modules_off_text(char *out, size_t outlen);
/* Programs that launch others (mpiexec, shells) write no log. */
int iochar_is_launcher(const char *exe_basename);
/* This process is one of iochar's own tools (console scripts, python -m iochar). */
int iochar_is_own_tool(void);

#endif
