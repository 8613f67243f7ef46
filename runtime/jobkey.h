/* Which job a process belongs to when it is not (yet) an MPI rank: the job key,
 * the rank a launcher gave it, its tooled parent, and its program's name
 * (runtime/jobkey.c; docs/log-format.md "Jobs"). */
#ifndef IOCHAR_JOBKEY_H
#define IOCHAR_JOBKEY_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

typedef struct iochar_jobkey {
  char key[320];          /* the job key: the same in every process of the job */
  char key_from[48];      /* what made it: slurm, flux, pbs, lsf, env:NAME, pmix... */
  int task_rank;          /* -1: not a task (no launcher rank new to this process) */
  char rank_from[32];     /* the variable the rank came from (RANK, SLURM_PROCID...) */
  int world_size;         /* 0: not known */
  char world_from[32];    /* the variable the world size came from */
  int parent_pid;         /* the nearest tooled ancestor in the job, 0: none */
  long long parent_start; /* its start (clock ticks after boot, /proc/PID/stat) */
  long long start;        /* this process's start, same clock */
  char program[4096];     /* the script or module for an interpreter, else the exe */
  char interpreter[256];  /* the interpreter's path when program is a script/module */
} iochar_jobkey;
extern iochar_jobkey iochar_jobkey_info;

/* At start (inside the tool, before anything is recorded): reads this
 * process's and its ancestors' /proc entries.  exe: /proc/self/exe; jobid
 * (a pid outside a batch job) becomes the root's pid in a tooled process's
 * child. */
void iochar_jobkey_init(const char *exe, char *jobid, size_t jobid_size);
/* In a fork child: same job, the parent its parent. */
void iochar_jobkey_forked(void);

#pragma GCC visibility pop

#endif
