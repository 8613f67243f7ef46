/* Run-time configuration: IOCHAR_* environment variables, launcher detection. */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

iochar_config iochar_cfg;
iochar_env iochar_envs;

static int env_on(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}
static const char *env_set(const char *name) { /* NULL when unset or empty */
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

void iochar_config_env(void) {
  iochar_env *e = &iochar_envs;
  /* The launchers' rank variables: set for MPI processes before MPI_Init. */
  static const char *const ranks[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                      "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
    const char *v = env_set(ranks[i]);
    if (v) {
      e->launcher_rank = atoi(v);
      break;
    }
  }
  e->user = env_set("USER");
  if (!e->user) e->user = env_set("LOGNAME");
  const char *live = getenv("IOCHAR_LIVE");
  e->live_off = live && !strcmp(live, "0");
  e->callsites = env_on("IOCHAR_CALLSITES");
  e->trace = env_on("IOCHAR_TRACE");
  e->callsites_sample = env_set("IOCHAR_CALLSITES_SAMPLE");
  e->trace_memory = env_set("IOCHAR_TRACE_MEMORY");
  e->exclude_pattern = env_set("IOCHAR_EXCLUDE_PATTERN");
  e->python_trees[0] = getenv("VIRTUAL_ENV");
  e->python_trees[1] = getenv("CONDA_PREFIX");
}

static const char *const default_exclude[] = {
    "/proc/",  "/sys/", "/dev/",  "/etc/",  "/usr/", "/lib/",
    "/lib64/", "/bin/", "/sbin/", "/boot/", "/run/",
};

uint64_t iochar_parse_size(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return 0;
  switch (*end) {
  case 'k':
  case 'K':
    v <<= 10;
    end++;
    break;
  case 'm':
  case 'M':
    v <<= 20;
    end++;
    break;
  case 'g':
  case 'G':
    v <<= 30;
    end++;
    break;
  default: break;
  }
  if (*end == 'b' || *end == 'B') end++;
  return *end ? 0 : (uint64_t)v;
}

/* Split a colon list into the (never freed) table; the env string stays. */
static void add_prefixes(const char *list, const char **tab, size_t *lens, int *n) {
  if (!list) return;
  char *copy = strdup(list);
  if (!copy) return;
  for (char *save, *tok = strtok_r(copy, ":", &save); tok && *n < IOCHAR_MAX_PREFIXES;
       tok = strtok_r(NULL, ":", &save)) {
    tab[*n] = tok;
    lens[(*n)++] = strlen(tok);
  }
}

int iochar_config_load(void) {
  const char *v = getenv("IOCHAR_DISABLE");
  if (v && *v && strcmp(v, "0") != 0) {
    iochar_cfg.disabled = 1;
    return -1;
  }
  if (iochar_is_own_tool()) {
    /* Its children too (addr2line, a browser, Dask workers): IOCHAR_DISABLE
     * is ours to set, and only in our own tools' environment. */
    setenv("IOCHAR_DISABLE", "1", 1);
    iochar_cfg.disabled = 1;
    return -1;
  }
  iochar_cfg.logfile = getenv("IOCHAR_LOGFILE");
  if (iochar_cfg.logfile && !*iochar_cfg.logfile) iochar_cfg.logfile = NULL;
  iochar_cfg.logdir = getenv("IOCHAR_LOGDIR");
  if (iochar_cfg.logdir && !*iochar_cfg.logdir) iochar_cfg.logdir = NULL;
  iochar_cfg.memory = IOCHAR_DEFAULT_MEMORY;
  if ((v = getenv("IOCHAR_MEMORY")) && *v) {
    uint64_t m = iochar_parse_size(v);
    if (m)
      iochar_cfg.memory = m;
    else
      iochar_warn_once(IOCHAR_WARN_CONFIG_MEMORY, "IOCHAR_MEMORY=%s is not a size; using %u bytes",
                       v, IOCHAR_DEFAULT_MEMORY);
  }
  for (size_t i = 0; i < sizeof default_exclude / sizeof *default_exclude; i++) {
    iochar_cfg.exclude[iochar_cfg.nexclude] = default_exclude[i];
    iochar_cfg.exclude_len[iochar_cfg.nexclude++] = strlen(default_exclude[i]);
  }
  add_prefixes(getenv("IOCHAR_EXCLUDE"), iochar_cfg.exclude, iochar_cfg.exclude_len,
               &iochar_cfg.nexclude);
  add_prefixes(getenv("IOCHAR_INCLUDE"), iochar_cfg.include, iochar_cfg.include_len,
               &iochar_cfg.ninclude);
  static const char *const batch[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"};
  for (size_t i = 0; i < sizeof batch / sizeof *batch && !iochar_cfg.batch_jobid; i++)
    iochar_cfg.batch_jobid = getenv(batch[i]);
  /* The MPI shutdown's knobs (reducer/): tests and measurements only. */
  iochar_cfg.timing = (v = getenv("IOCHAR_TIMING")) && *v == '1';
  iochar_cfg.collective_write = (v = getenv("IOCHAR_COLLECTIVE_WRITE")) ? atoi(v) != 0 : -1;
  iochar_cfg.test_fault = getenv("IOCHAR_TEST_FAULT");
  return 0;
}

int iochar_is_launcher(const char *b) {
  /* Launchers and shells start the job's processes; the small utilities of
   * job scripts (and of wrapper scripts such as pyenv's shims) do no I/O
   * worth a log, and one log each would bury the job's own. */
  // clang-format off
  static const char *const quiet[] = {
      "mpiexec", "mpirun", "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
      "mpiexec.openmpi", "mpirun.openmpi", "orterun", "hydra_pmi_proxy",
      "hydra_nameserver", "srun", "orted", "prted", "prterun", "prte", "aprun",
      "jsrun", "sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "env", "timeout",
      "time", "nohup", "setsid", "taskset", "numactl", "xargs", "strace", "ltrace",
      "gdb", "valgrind", "perf", "sudo", "ssh",
      "basename", "dirname", "readlink", "realpath", "uname", "hostname", "id",
      "whoami", "logname", "groups", "date", "sleep", "true", "false", "which",
      "tput", "stty", "tty", "nproc", "getconf", "locale", "mktemp", "seq", "expr",
      "test", "[", "echo", "printf", "pwd", "arch", "hostid", "mkdir", "rmdir",
      "chmod", "chown", "touch", "ln", "rm", "kill", "ps", "getent"};
  // clang-format on
  for (size_t i = 0; i < sizeof quiet / sizeof *quiet; i++)
    if (strcmp(b, quiet[i]) == 0) return 1;
  return 0;
}

static const char *base_of(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

static int is_tool_module(const char *m) {
  return strcmp(m, "iochar") == 0 || strncmp(m, "iochar.", 7) == 0;
}

/* iochar's own tools never trace themselves, whatever the environment: a
 * console script (iochar-report, iochar-parser, iochar-diff, iochar-db...)
 * run directly or by a Python interpreter (the kernel runs a script's
 * shebang as `python3 /path/iochar-report ...`), or `python -m iochar...`.
 * Decided from /proc/self/cmdline before anything is recorded. */
int iochar_is_own_tool(void) {
  char buf[4096];
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *argv[64];
  int argc = 0;
  for (const char *p = buf; p < buf + n && argc < 64; p += strlen(p) + 1) argv[argc++] = p;
  if (strncmp(base_of(argv[0]), "iochar-", 7) == 0) return 1;
  const char *interp = base_of(argv[0]);
  if (strncmp(interp, "python", 6) != 0 && strncmp(interp, "pypy", 4) != 0) return 0;
  /* The interpreter's options, up to the script or the -m module.  A short
   * option cluster ends at an option that takes a value (-c, -m, -W, -X). */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == 0) return a[0] != '-' && strncmp(base_of(a), "iochar-", 7) == 0;
    if (a[1] == '-') {
      if (a[2] == 0) return i + 1 < argc && strncmp(base_of(argv[i + 1]), "iochar-", 7) == 0;
      if (strcmp(a, "--check-hash-based-pycs") == 0) i++;
      continue;
    }
    for (const char *o = a + 1; *o; o++) {
      if (*o == 'c') return 0; /* a command string: not a tool */
      if (*o == 'm')
        return o[1] ? is_tool_module(o + 1) : i + 1 < argc && is_tool_module(argv[i + 1]);
      if (*o == 'W' || *o == 'X') {
        if (!o[1]) i++;
        break;
      }
    }
  }
  return 0;
}
