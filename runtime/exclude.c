/* Which names are not recorded: the IOCHAR_EXCLUDE prefixes (IOCHAR_INCLUDE
 * wins), the log file itself, the name pattern (IOCHAR_EXCLUDE_PATTERN) and
 * the default that leaves out an interpreter's own installation tree, so
 * that a Python job's data files, not its modules, lead the report.
 *
 * The pattern is evaluated once per name: the verdict is cached by path hash
 * (a fixed table; once full, later names are evaluated each time they are
 * opened, still correctly).  Opens and other calls that name a file are the
 * only callers; reads and writes never get here. */
#include <dirent.h>
#include <fcntl.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "exclude.h"
#include "paths.h"
#include "warn.h"

static char log_path_excl[IOCHAR_PATH_MAX];
static size_t log_path_excl_len;
static regex_t pattern;
static int have_pattern;

#define VERDICTS 4096 /* power of two */
/* hash | 1 for "excluded", hash & ~1 for "kept"; 0: free slot. */
static _Atomic uint64_t verdicts[VERDICTS];

static int pattern_matches(const char *abs, const iochar_path_note *no) {
  uint64_t h = no ? no->id : iochar_hash_path(abs);
  uint64_t key = h & ~1ull ? h & ~1ull : 2;
  for (int i = 0; i < 8; i++) { /* a short probe: the table is a cache */
    uint64_t v =
        atomic_load_explicit(&verdicts[(h + (uint64_t)i) & (VERDICTS - 1)], memory_order_relaxed);
    if (!v) break;
    if ((v & ~1ull) == key) return (int)(v & 1);
  }
  int out = regexec(&pattern, abs, 0, NULL, 0) == 0;
  for (int i = 0; i < 8; i++) {
    uint64_t zero = 0;
    if (atomic_compare_exchange_strong(&verdicts[(h + (uint64_t)i) & (VERDICTS - 1)], &zero,
                                       key | (uint64_t)out))
      break;
  }
  return out;
}

/* Byte-compiled Python (*.pyc, *.pyo, __pycache__/) is never data: checked
 * by hand, without the regex engine (which allocates). */
static int byte_code(const char *abs, const iochar_path_note *no) {
  size_t n = no ? no->len : strlen(abs);
  if (n > 4 && abs[n - 4] == '.' && abs[n - 3] == 'p' && abs[n - 2] == 'y' &&
      (abs[n - 1] == 'c' || abs[n - 1] == 'o'))
    return 1;
  return no ? no->byte_code : strstr(abs, "/__pycache__/") != NULL;
}

int iochar_name_excluded(const char *abs, const iochar_path_note *no) {
  return byte_code(abs, no) || (have_pattern && pattern_matches(abs, no));
}

static void add_exclude(const char *dir) {
  if (iochar_cfg.nexclude >= IOCHAR_MAX_PREFIXES) return;
  for (int i = 0; i < iochar_cfg.nexclude; i++)
    if (strcmp(iochar_cfg.exclude[i], dir) == 0) return;
  char *copy = strdup(dir);
  if (!copy) return;
  iochar_cfg.exclude[iochar_cfg.nexclude] = copy;
  iochar_cfg.exclude_len[iochar_cfg.nexclude++] = strlen(copy);
}

/* PREFIX/lib and PREFIX/lib64, names included (the interpreter stats them),
 * when PREFIX/lib/pythonX.Y exists: the standard library, site-packages and
 * the shared libraries of a Python installed (or a virtual environment or
 * conda environment made) at PREFIX. */
static void add_python_tree(const char *prefix) {
  char dir[IOCHAR_PATH_MAX];
  if (!prefix || prefix[0] != '/' || snprintf(dir, sizeof dir, "%s/lib", prefix) >= (int)sizeof dir)
    return;
  DIR *d = opendir(dir);
  if (!d) return;
  int python = 0;
  struct dirent *e;
  while (!python && (e = readdir(d)) != NULL)
    python = strncmp(e->d_name, "python", 6) == 0 && e->d_name[6] >= '0' && e->d_name[6] <= '9';
  closedir(d);
  if (!python) return;
  add_exclude(dir);
  if (snprintf(dir, sizeof dir, "%s/lib64", prefix) < (int)sizeof dir) add_exclude(dir);
}

/* dirname(dirname(path)): /opt/py/bin/python3 -> /opt/py. */
static void add_tree_of_program(const char *path) {
  char p[IOCHAR_PATH_MAX];
  if (!path || path[0] != '/' || strlen(path) >= sizeof p) return;
  strcpy(p, path);
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) return;
    *slash = 0;
  }
  add_python_tree(p);
}

/* The running interpreter's tree (the real executable's, and the one named
 * by argv[0], which is a virtual environment's when its python is a
 * symlink), plus an activated virtual environment or conda environment. */
static void exclude_interpreter_trees(void) {
  char exe[IOCHAR_PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    add_tree_of_program(exe);
  }
  char argv0[IOCHAR_PATH_MAX];
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t r = read(fd, argv0, sizeof argv0 - 1);
    close(fd);
    argv0[r > 0 ? r : 0] = 0;
    char abs[IOCHAR_PATH_MAX];
    if (argv0[0] && strchr(argv0, '/') &&
        iochar_path_resolve(AT_FDCWD, argv0, abs, sizeof abs) == 0)
      add_tree_of_program(abs);
  }
  add_python_tree(iochar_envs.python_trees[0]); /* VIRTUAL_ENV */
  add_python_tree(iochar_envs.python_trees[1]); /* CONDA_PREFIX */
}

/* Name patterns and interpreter trees (they add exclusion prefixes: before
 * the prefix index is built). */
static void names_init(void) {
  exclude_interpreter_trees();
  const char *p = iochar_envs.exclude_pattern;
  if (!p) return;
  int rc = regcomp(&pattern, p, REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char why[128];
    regerror(rc, &pattern, why, sizeof why);
    iochar_warn_once(IOCHAR_WARN_EXCLUDE_PATTERN,
                     "IOCHAR_EXCLUDE_PATTERN is not a POSIX extended regular expression (%s); "
                     "ignored",
                     why);
    return;
  }
  have_pattern = 1;
}

static int has_prefix(const char *s, const char *const *tab, const size_t *lens, int n) {
  for (int i = 0; i < n; i++)
    if (strncmp(s, tab[i], lens[i]) == 0) return 1;
  return 0;
}

/* Second characters of every prefix: most paths (/home, /scratch, /tmp) are
 * cleared by one table lookup instead of a dozen string compares. */
static uint8_t second_char[256];
static int second_any;

static void index_prefixes(void) {
  const char *const *tabs[2] = {iochar_cfg.exclude, iochar_cfg.include};
  const size_t *lens[2] = {iochar_cfg.exclude_len, iochar_cfg.include_len};
  int ns[2] = {iochar_cfg.nexclude, iochar_cfg.ninclude};
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < ns[t]; i++) {
      if (lens[t][i] < 2)
        second_any = 1;
      else
        second_char[(uint8_t)tabs[t][i][1]] = 1;
    }
}

/* IOCHAR_INCLUDE wins over every exclusion; prefixes before patterns. */
int iochar_path_excluded(const char *abs) {
  const iochar_path_note *no = iochar_path_note_of(abs);
  if (log_path_excl[0] && (!no || no->len == log_path_excl_len) && strcmp(abs, log_path_excl) == 0)
    return 1;
  if (second_any || !abs[0] || second_char[(uint8_t)abs[1]]) {
    if (has_prefix(abs, iochar_cfg.include, iochar_cfg.include_len, iochar_cfg.ninclude)) return 0;
    if (has_prefix(abs, iochar_cfg.exclude, iochar_cfg.exclude_len, iochar_cfg.nexclude)) return 1;
  }
  return iochar_name_excluded(abs, no);
}

/* At start-up, after the cwd is known (iochar_paths_init). */
void iochar_exclude_init(void) {
  names_init();
  index_prefixes();
  if (iochar_cfg.logfile)
    iochar_path_resolve(AT_FDCWD, iochar_cfg.logfile, log_path_excl, sizeof log_path_excl);
  log_path_excl_len = strlen(log_path_excl);
}
