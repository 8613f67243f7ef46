/* Run-time configuration: IOCHAR_* environment variables, launcher detection. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"

iochar_config iochar_cfg;

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
