/* Which job a process belongs to when it is not an MPI rank (docs/log-format.md
 * "Jobs"): decided once at start from /proc, never from anything the tool puts
 * in the application's environment.
 *
 * A process whose parent chain reaches a tooled, recording process (its
 * "root": the topmost such ancestor, launchers and shells in between passed
 * through) belongs to the root's job: multiprocessing's spawn and forkserver
 * children, subprocess children, torchrun's workers under a tooled launcher.
 * A root's job key is its own process (host, pid, start tick), unless a
 * launcher gave it a rank: then it is a task of its scheduler step (or of its
 * PMIx namespace, its torchrun rendezvous, else of its launcher process), and
 * the key names that and the program.  A process is a task when a launcher's
 * rank variable is new to it: set, and not the same in its tooled parent
 * (a data-loader worker inherits its trainer's RANK and is no task).  Each
 * check reads /proc/<pid>/{maps,environ,exe,stat} of an ancestor of the same
 * user: a few reads per ancestor, once per process. */
#include "jobkey.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"

iochar_jobkey iochar_jobkey_info = {.task_rank = -1};

#define ENV_MAX (1u << 20) /* bytes of an environment read */
#define DEPTH_MAX 16       /* ancestors looked at */

/* snprintf whose truncation is expected (keys and names are cut at their bound). */
__attribute__((format(printf, 3, 4))) static void put(char *out, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, n, fmt, ap);
  va_end(ap);
}

/* ---- /proc ---------------------------------------------------------------- */

static size_t read_all(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t n = 0;
  for (ssize_t r; n < cap && (r = read(fd, buf + n, cap - n)) > 0;) n += (size_t)r;
  close(fd);
  return n;
}

typedef struct env_buf {
  char *p;
  size_t n;
} env_buf;

static env_buf env_of(int pid) {
  env_buf e = {malloc(ENV_MAX + 1), 0};
  char path[64];
  if (!e.p) return e;
  if (pid)
    put(path, sizeof path, "/proc/%d/environ", pid);
  else
    put(path, sizeof path, "/proc/self/environ");
  e.n = read_all(path, e.p, ENV_MAX);
  e.p[e.n] = 0;
  return e;
}

/* NAME's value in a NUL-separated environment, NULL when unset or empty. */
static const char *env_get(const env_buf *e, const char *name) {
  size_t l = strlen(name);
  for (size_t i = 0; e->p && i < e->n; i += strlen(e->p + i) + 1)
    if (strncmp(e->p + i, name, l) == 0 && e->p[i + l] == '=' && e->p[i + l + 1])
      return e->p + i + l + 1;
  return NULL;
}

/* Fields 4 (ppid) and 22 (start time) of /proc/PID/stat; -1 when unreadable. */
static long long stat_field(int pid, int field) {
  char path[64], buf[1024];
  put(path, sizeof path, "/proc/%d/stat", pid);
  size_t n = read_all(path, buf, sizeof buf - 1);
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
  if (!p) return -1;
  for (int f = 2; f < field && p; f++) p = strchr(p + 1, ' ');
  return p ? strtoll(p + 1, NULL, 10) : -1;
}

/* Our own library file, to find it in another process's maps. */
static dev_t lib_dev;
static ino_t lib_ino;

static int maps_line_is_lib(const char *l) {
  /* address perms offset dev(maj:min, hex) inode path */
  const char *p = l;
  for (int f = 0; f < 3 && p; f++) p = strchr(p, ' '), p = p ? p + 1 : NULL;
  if (!p) return 0;
  char *end;
  unsigned long maj = strtoul(p, &end, 16), min;
  if (*end != ':') return 0;
  min = strtoul(end + 1, &end, 16);
  unsigned long long ino = strtoull(end, NULL, 10);
  return ino == (unsigned long long)lib_ino && maj == major(lib_dev) && min == minor(lib_dev);
}

static int has_lib(int pid) {
  char path[64], buf[16384];
  put(path, sizeof path, "/proc/%d/maps", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t have = 0;
  int found = 0;
  for (ssize_t r; !found && (r = read(fd, buf + have, sizeof buf - 1 - have)) > 0;) {
    have += (size_t)r;
    buf[have] = 0;
    char *line = buf, *nl;
    while (!found && (nl = strchr(line, '\n'))) {
      *nl = 0;
      found = maps_line_is_lib(line);
      line = nl + 1;
    }
    have -= (size_t)(line - buf);
    memmove(buf, line, have);
    if (have == sizeof buf - 1) have = 0; /* a line longer than the buffer: not ours */
  }
  close(fd);
  return found;
}

static const char *base_of(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

/* A tooled process that records (not a launcher, a shell, or switched off). */
static int records(int pid, const env_buf *e) {
  char path[64], exe[4096], comm[64];
  put(path, sizeof path, "/proc/%d/exe", pid);
  ssize_t n = readlink(path, exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = 0;
  put(path, sizeof path, "/proc/%d/comm", pid);
  size_t c = read_all(path, comm, sizeof comm - 1);
  comm[c] = 0;
  if (c && comm[c - 1] == '\n') comm[c - 1] = 0;
  if (iochar_is_launcher(base_of(exe)) || iochar_is_launcher(comm)) return 0;
  const char *off = env_get(e, "IOCHAR_DISABLE");
  return !(off && strcmp(off, "0") != 0);
}

/* ---- launchers ------------------------------------------------------------ */

/* Rank variables, innermost launcher first (torchrun inside srun: RANK), each
 * with the variable holding the world size. */
static const char *const rank_vars[][2] = {
    {"RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE"},
    {"FLUX_TASK_RANK", "FLUX_JOB_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};
#define N_RANK_VARS (sizeof rank_vars / sizeof *rank_vars)

static int nonneg_int(const char *v) {
  if (!v) return -1;
  char *end;
  long x = strtol(v, &end, 10);
  return *end || end == v || x < 0 || x > (1 << 24) ? -1 : (int)x;
}

/* The index of the rank variable set in e (torchrun's RANK only with a world
 * size, as it always sets), -1: none.  With `parent`, only a variable whose
 * value the parent does not have. */
static int rank_var(const env_buf *e, const env_buf *parent) {
  for (size_t i = 0; i < N_RANK_VARS; i++) {
    const char *v = env_get(e, rank_vars[i][0]);
    if (nonneg_int(v) < 0) continue;
    if (i == 0 && nonneg_int(env_get(e, "WORLD_SIZE")) <= 0) continue;
    const char *pv = parent ? env_get(parent, rank_vars[i][0]) : NULL;
    if (pv && strcmp(pv, v) == 0) continue; /* inherited, not given */
    return (int)i;
  }
  return -1;
}

/* The scheduler's job step, "" outside one. */
static void step_of(const env_buf *e, char *out, size_t n, char *from, size_t fn) {
  const char *name = iochar_cfg.jobid_env, *v;
  out[0] = 0;
  if (name && (v = env_get(e, name))) {
    put(out, n, "env:%s=%s", name, v);
    put(from, fn, "env:%s", name);
  } else if ((v = env_get(e, "SLURM_JOB_ID")) || (v = env_get(e, "SLURM_JOBID"))) {
    const char *s = env_get(e, "SLURM_STEP_ID");
    if (!s) s = env_get(e, "SLURM_STEPID");
    put(out, n, "slurm:%s.%s", v, s ? s : "batch");
    put(from, fn, "slurm");
  } else if ((v = env_get(e, "FLUX_JOB_ID"))) {
    put(out, n, "flux:%s", v);
    put(from, fn, "flux");
  } else if ((v = env_get(e, "PBS_JOBID"))) {
    put(out, n, "pbs:%s", v);
    put(from, fn, "pbs");
  } else if ((v = env_get(e, "LSB_JOBID"))) {
    const char *ix = env_get(e, "LSB_JOBINDEX");
    put(out, n, "lsf:%s%s%s%s", v, ix && strcmp(ix, "0") ? "[" : "",
        ix && strcmp(ix, "0") ? ix : "", ix && strcmp(ix, "0") ? "]" : "");
    put(from, fn, "lsf");
  }
}

/* ---- program names -------------------------------------------------------- */

static int is_python(const char *b) { return !strncmp(b, "python", 6) || !strncmp(b, "pypy", 4); }

static int is_interpreter(const char *b) {
  static const char *const names[] = {"perl", "ruby", "Rscript", "julia", "node",
                                      "lua",  "php",  "tclsh",   "wish"};
  if (is_python(b)) return 1;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strncmp(b, names[i], strlen(names[i]))) return 1;
  return 0;
}

/* The script (or -m module) an interpreter runs, from its NUL-separated argv;
 * NULL: none (a -c command, standard input, an interactive session). */
static const char *script_of(const char *interp, const char *argv, size_t n, int *module) {
  *module = 0;
  const char *a = argv + strlen(argv) + 1; /* past argv[0] */
  for (; a < argv + n; a += strlen(a) + 1) {
    if (a[0] != '-') return a;
    if (!a[1]) return NULL;           /* "-": standard input */
    if (!is_python(interp)) continue; /* other interpreters: options skipped */
    if (a[1] == '-') {
      if (!a[2]) return a + 3 < argv + n ? a + 3 : NULL; /* "--": the script follows */
      if (!strcmp(a, "--check-hash-based-pycs")) a += strlen(a) + 1;
      continue;
    }
    for (const char *o = a + 1; *o; o++) {
      if (*o == 'c') return NULL;
      if (*o == 'm') {
        *module = 1;
        if (o[1]) return o + 1;
        a += strlen(a) + 1;
        return a < argv + n ? a : NULL;
      }
      if (*o == 'W' || *o == 'X') {
        if (!o[1] && a + strlen(a) + 1 < argv + n) a += strlen(a) + 1;
        break;
      }
    }
  }
  return NULL;
}

/* program: the script (made absolute against cwd) or module an interpreter
 * runs, else the executable; interp: the interpreter's path, or "". */
static void program_of(int pid, const char *exe, char *program, size_t pn, char *interp,
                       size_t in) {
  char path[64], argv[8192], cwd[4096];
  put(path, sizeof path, pid ? "/proc/%d/cmdline" : "/proc/self/cmdline", pid);
  size_t n = read_all(path, argv, sizeof argv - 1);
  argv[n] = 0;
  put(program, pn, "%s", exe);
  interp[0] = 0;
  int module;
  const char *s =
      n && is_interpreter(base_of(exe)) ? script_of(base_of(exe), argv, n, &module) : NULL;
  if (!s || !*s) return;
  put(interp, in, "%s", exe);
  put(path, sizeof path, pid ? "/proc/%d/cwd" : "/proc/self/cwd", pid);
  ssize_t c = module || s[0] == '/' ? -1 : readlink(path, cwd, sizeof cwd - 1);
  if (c > 0) {
    cwd[c] = 0;
    put(program, pn, "%s/%s", cwd, s[0] == '.' && s[1] == '/' ? s + 2 : s);
  } else {
    put(program, pn, "%s", s);
  }
}

/* ---- the key -------------------------------------------------------------- */

void iochar_jobkey_init(const char *exe, char *jobid, size_t jobid_size) {
  iochar_jobkey *k = &iochar_jobkey_info;
  char host[256];
  if (gethostname(host, sizeof host) != 0) put(host, sizeof host, "unknown");
  host[sizeof host - 1] = 0;
  int self = (int)getpid();
  k->start = stat_field(self, 22);
  program_of(0, exe, k->program, sizeof k->program, k->interpreter, sizeof k->interpreter);

  Dl_info info;
  struct stat st;
  int known =
      dladdr((void *)iochar_jobkey_init, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0;
  if (known) lib_dev = st.st_dev, lib_ino = st.st_ino;

  /* The parent chain: the nearest recording ancestor (the parent in the job)
   * and the topmost (the root), through tooled launchers and shells. */
  int nearest = 0, root = 0;
  env_buf near_env = {0}, root_env = {0};
  for (int pid = getppid(), d = 0; known && pid > 1 && d < DEPTH_MAX; d++) {
    if (!has_lib(pid)) break;
    env_buf e = env_of(pid);
    if (records(pid, &e)) {
      if (!nearest) {
        nearest = pid;
        near_env = e;
      } else if (root && root != nearest) {
        free(root_env.p);
      }
      root = pid;
      if (root != nearest) root_env = e;
    } else {
      free(e.p);
    }
    pid = (int)stat_field(pid, 4);
  }
  if (root == nearest) root_env = near_env;

  env_buf mine = env_of(0);
  int rv = rank_var(&mine, nearest ? &near_env : NULL);
  if (rv >= 0) {
    k->task_rank = nonneg_int(env_get(&mine, rank_vars[rv][0]));
    put(k->rank_from, sizeof k->rank_from, "%s", rank_vars[rv][0]);
    int w = nonneg_int(env_get(&mine, rank_vars[rv][1]));
    if (rv == 6 && w <= 0) { /* srun sets both; an allocation's batch step one */
      w = nonneg_int(env_get(&mine, "SLURM_STEP_NUM_TASKS"));
      if (w > 0) put(k->world_from, sizeof k->world_from, "SLURM_STEP_NUM_TASKS");
    } else if (w > 0) {
      put(k->world_from, sizeof k->world_from, "%s", rank_vars[rv][1]);
    }
    k->world_size = w > k->task_rank ? w : 0;
    if (!k->world_size) k->world_from[0] = 0;
  }
  if (nearest) {
    k->parent_pid = nearest;
    k->parent_start = stat_field(nearest, 22);
  }

  /* The root's key: a task of a step (or launcher), else its own process. */
  int r = root ? root : self;
  const env_buf *re = root ? &root_env : &mine;
  long long rstart = root ? stat_field(root, 22) : k->start;
  if (rank_var(re, NULL) >= 0) {
    char step[256], from[48] = "", prog[4096], rinterp[256], rexe[4096], path[64];
    step_of(re, step, sizeof step, from, sizeof from);
    put(rexe, sizeof rexe, "%s", exe);
    if (root) {
      put(path, sizeof path, "/proc/%d/exe", root);
      ssize_t n = readlink(path, rexe, sizeof rexe - 1);
      rexe[n > 0 ? n : 0] = 0;
    }
    program_of(root, rexe, prog, sizeof prog, rinterp, sizeof rinterp);
    const char *name = base_of(prog), *v;
    if (step[0]) {
      put(k->key, sizeof k->key, "%s:%s", step, name);
      put(k->key_from, sizeof k->key_from, "%s", from);
    } else if ((v = env_get(re, "PMIX_NAMESPACE"))) {
      put(k->key, sizeof k->key, "pmix:%s:%s", v, name);
      put(k->key_from, sizeof k->key_from, "pmix");
    } else if ((v = env_get(re, "TORCHELASTIC_RUN_ID")) && env_get(re, "MASTER_ADDR")) {
      put(k->key, sizeof k->key, "torchrun:%s@%s:%s:%s", v, env_get(re, "MASTER_ADDR"),
          env_get(re, "MASTER_PORT") ? env_get(re, "MASTER_PORT") : "", name);
      put(k->key_from, sizeof k->key_from, "torchrun");
    } else { /* tasks of one launcher process on this node */
      int lp = (int)stat_field(r, 4);
      put(k->key, sizeof k->key, "launcher:%s:%d:%lld:%s", host, lp, stat_field(lp, 22), name);
      put(k->key_from, sizeof k->key_from, "launcher");
    }
  } else {
    put(k->key, sizeof k->key, "process:%s:%d:%lld", host, r, rstart);
    put(k->key_from, sizeof k->key_from, "process");
  }
  /* Outside a batch job the job id is a pid: the root's, in every process of
   * the job (as a fork child keeps its parent's). */
  if (root && !iochar_cfg.batch_jobid) put(jobid, jobid_size, "%d", root);
  if (root_env.p != near_env.p) free(root_env.p);
  free(near_env.p);
  free(mine.p);
}

void iochar_jobkey_forked(void) {
  iochar_jobkey *k = &iochar_jobkey_info;
  k->parent_pid = (int)getppid();
  k->parent_start = k->start;
  k->start = stat_field((int)getpid(), 22);
  k->task_rank = -1; /* the task is the parent */
  k->rank_from[0] = k->world_from[0] = 0;
  k->world_size = 0;
}
