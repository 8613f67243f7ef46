/* Run-time configuration: IOCHAR_* settings (environment, config files, build
 * defaults), launcher detection. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "safefile.h"
#include "warn.h"

iochar_config iochar_cfg;
iochar_env iochar_envs;

/* Settings come in layers, the first that sets a name wins: the environment,
 * then the file IOCHAR_CONFIG names, then the site file, then the build's
 * default (meson setup -Dlogroot=ROOT).  A file holds NAME=VALUE lines with
 * the variables' names; `#` starts a comment; an empty value sets nothing. */
#ifndef IOCHAR_SITE_FILE
#define IOCHAR_SITE_FILE "/usr/local/etc/iochar.conf"
#endif
#ifndef IOCHAR_BUILD_LOGROOT
#define IOCHAR_BUILD_LOGROOT ""
#endif
#define CONFIG_MAX (64u << 10) /* bytes of a config file read */
#define CONFIG_KEYS 64         /* settings kept per file */

/* Every name a file may set: the runtime settings (README, DESIGN.md). */
// clang-format off
static const char *const known[] = {
    "IOCHAR_DISABLE", "IOCHAR_LOGFILE", "IOCHAR_LOGDIR", "IOCHAR_LOGROOT", "IOCHAR_LIVEDIR",
    "IOCHAR_LIVE", "IOCHAR_MEMORY", "IOCHAR_EXCLUDE", "IOCHAR_INCLUDE", "IOCHAR_EXCLUDE_PATTERN",
    "IOCHAR_CALLSITES", "IOCHAR_CALLSITES_SAMPLE", "IOCHAR_TRACE", "IOCHAR_TRACE_MEMORY",
    "IOCHAR_TIMING", "IOCHAR_COLLECTIVE_WRITE", "IOCHAR_JOBID_ENV",
    /* issue 41: the site's knobs */
    "IOCHAR_MODULES", "IOCHAR_DISABLE_MODULES", "IOCHAR_APP_INCLUDE", "IOCHAR_APP_EXCLUDE",
    "IOCHAR_RANKS", "IOCHAR_RANKS_EXCLUDE", "IOCHAR_MAX_RECORDS"};

typedef struct layer {
  const char *path;
  int n;
  struct {
    const char *name, *value;
    int line;
  } kv[CONFIG_KEYS];
} layer;
static layer files[2]; /* IOCHAR_CONFIG's, the site file */
/* What a file had that could not be used: the first line said, and how many. */
static char file_problem[512];
static int file_problems;

static void problem(const char *path, int line, const char *what, const char *text) {
  if (file_problems++ > 0) return;
  if (line)
    snprintf(file_problem, sizeof file_problem, "config file %s line %d: %s %.200s", path, line,
             what, text);
  else
    snprintf(file_problem, sizeof file_problem, "config file %s: %s", path, what);
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  char *e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = 0;
  return s;
}

static int is_known(const char *name) {
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (strcmp(name, known[i]) == 0) return 1;
  return 0;
}

/* Read one file into a layer (the text is kept for the process's life).  A
 * site file that does not exist is the common case and says nothing. */
static void layer_read(layer *l, const char *path, int must_exist) {
  l->path = path;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (must_exist || errno != ENOENT) problem(path, 0, strerror(errno), "");
    return;
  }
  struct stat st;
  char *text = NULL;
  ssize_t len = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (text = malloc(CONFIG_MAX + 1)))
    for (ssize_t r; len < (ssize_t)CONFIG_MAX && (r = read(fd, text + len, CONFIG_MAX - len));) {
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) break;
      len += r;
    }
  close(fd);
  if (!text) {
    problem(path, 0, "not a regular file", "");
    return;
  }
  text[len] = 0;
  int line = 0;
  for (char *next, *s = text; s && *s; s = next) {
    next = strchr(s, '\n');
    if (next) *next++ = 0;
    line++;
    char *hash = strchr(s, '#');
    if (hash) *hash = 0;
    s = trim(s);
    if (!*s) continue;
    char *eq = strchr(s, '=');
    if (!eq) {
      problem(path, line, "not NAME=VALUE:", s);
      continue;
    }
    *eq = 0;
    char *name = trim(s), *value = trim(eq + 1);
    size_t vl = strlen(value); /* one pair of quotes around the value goes */
    if (vl >= 2 && (value[0] == '"' || value[0] == '\'') && value[vl - 1] == value[0])
      value[vl - 1] = 0, value++;
    if (!is_known(name))
      problem(path, line, "unknown setting", name);
    else if (l->n < CONFIG_KEYS && *value)
      l->kv[l->n].name = name, l->kv[l->n].value = value, l->kv[l->n++].line = line;
  }
}

/* The winning value of a setting and where it came from (NULL: unset). */
typedef struct setting_src {
  const char *path; /* NULL: the environment or the build */
  int line;
} setting_src;

static const char *layer_get(const layer *l, const char *name, setting_src *src) {
  for (int i = l->n - 1; i >= 0; i--) /* the last line of a name counts */
    if (strcmp(l->kv[i].name, name) == 0) {
      if (src) src->path = l->path, src->line = l->kv[i].line;
      return l->kv[i].value;
    }
  return NULL;
}

/* The first layer's value of name that ok() accepts (ok NULL: any); a value
 * it refuses is ignored with one warning naming it and its source. */
static const char *setting_ok(const char *name, int (*ok)(const char *)) {
  setting_src src = {0};
  for (int k = 0; k < 4; k++) {
    const char *v = NULL;
    src.path = NULL;
    if (k == 0)
      v = getenv(name);
    else if (k < 3)
      v = layer_get(&files[k - 1], name, &src);
    else if (strcmp(name, "IOCHAR_LOGROOT") == 0)
      v = IOCHAR_BUILD_LOGROOT;
    if (!v || !*v) continue;
    if (!ok || ok(v)) return v;
    if (src.path)
      iochar_warn_once(IOCHAR_WARN_CONFIG_VALUE,
                       "%s=%s (config file %s line %d) is not valid; ignored", name, v, src.path,
                       src.line);
    else
      iochar_warn_once(IOCHAR_WARN_CONFIG_VALUE, "%s=%s is not valid; ignored", name, v);
  }
  return NULL;
}
static const char *setting(const char *name) { return setting_ok(name, NULL); }
static int setting_on(const char *name) { /* set, and not "0" */
  const char *v = setting(name);
  return v && strcmp(v, "0") != 0;
}
static int size_ok(const char *v) { return iochar_parse_size(v) != 0; }
static int sample_ok(const char *v) {
  char *end;
  long n = strtol(v, &end, 10);
  return !*end && n >= 1 && n <= 65535;
}
static int absolute_ok(const char *v) { return v[0] == '/'; }

const char *iochar_setting(const char *name) {
  return name && strncmp(name, "IOCHAR_", 7) == 0 ? setting(name) : NULL;
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

/* ---- issue 41: the site's knobs --------------------------------------- */
static const char *base_of(const char *p);

/* Module names a list may hold (any case); a family name stands for its
 * modules. */
static const struct {
  const char *name;
  uint32_t bits;
} module_names[] = {
    {"POSIX", 1u << IOCHAR_MOD_POSIX},
    {"STDIO", 1u << IOCHAR_MOD_STDIO},
    {"MPIIO", 1u << IOCHAR_MOD_MPIIO},
    {"MPI-IO", 1u << IOCHAR_MOD_MPIIO},
    {"H5F", 1u << IOCHAR_MOD_H5F},
    {"H5D", 1u << IOCHAR_MOD_H5D},
    {"HDF5", 1u << IOCHAR_MOD_H5F | 1u << IOCHAR_MOD_H5D},
    {"NC_FILE", 1u << IOCHAR_MOD_NC_FILE},
    {"NC_VAR", 1u << IOCHAR_MOD_NC_VAR},
    {"NETCDF", 1u << IOCHAR_MOD_NC_FILE | 1u << IOCHAR_MOD_NC_VAR},
    {"PNETCDF_FILE", 1u << IOCHAR_MOD_PNETCDF_FILE},
    {"PNETCDF_VAR", 1u << IOCHAR_MOD_PNETCDF_VAR},
    {"PNETCDF", 1u << IOCHAR_MOD_PNETCDF_FILE | 1u << IOCHAR_MOD_PNETCDF_VAR},
    {"LUSTRE", 1u << IOCHAR_MOD_LUSTRE}, /* follows POSIX whatever a list says (knobs_load) */
};
#define ALL_MODULES ((1u << IOCHAR_MOD_COUNT) - 1)
#define LIST_SEPS ", :"

/* "STDIO,H5D" -> module bits; -1 on a name it does not know. */
static int64_t module_list(const char *v) {
  uint32_t bits = 0;
  char tok[32];
  for (const char *p = v; *p;) {
    size_t n = strcspn(p, LIST_SEPS);
    if (n) {
      if (n >= sizeof tok) return -1;
      memcpy(tok, p, n);
      tok[n] = 0;
      size_t i = 0;
      while (i < sizeof module_names / sizeof *module_names &&
             strcasecmp(tok, module_names[i].name) != 0)
        i++;
      if (i == sizeof module_names / sizeof *module_names) return -1;
      bits |= module_names[i].bits;
    }
    p += n;
    p += strspn(p, LIST_SEPS);
  }
  return bits;
}
static int modules_ok(const char *v) { return module_list(v) >= 0; }

/* Rank lists: "0-3,8,16-" (ranges inclusive, an open end runs to the last
 * rank), at most RANK_RANGES ranges. */
#define RANK_RANGES 64
typedef struct rank_set {
  int n;
  int64_t lo[RANK_RANGES], hi[RANK_RANGES];
} rank_set;
static rank_set ranks_in, ranks_out;

static int rank_list(const char *v, rank_set *set) {
  rank_set s = {0};
  for (const char *p = v; *p;) {
    size_t n = strcspn(p, LIST_SEPS);
    if (n) {
      char *end;
      if (p[0] < '0' || p[0] > '9' || s.n == RANK_RANGES) return -1;
      long long lo = strtoll(p, &end, 10), hi = lo;
      if (*end == '-' && end + 1 < p + n)
        hi = strtoll(end + 1, &end, 10);
      else if (*end == '-') /* the open end: to the last rank */
        hi = INT64_MAX, end = (char *)p + n;
      if (end != p + n || hi < lo || lo < 0) return -1;
      s.lo[s.n] = lo, s.hi[s.n++] = hi;
    }
    p += n;
    p += strspn(p, LIST_SEPS);
  }
  if (!s.n) return -1;
  if (set) *set = s;
  return 0;
}
static int ranks_ok(const char *v) { return rank_list(v, NULL) == 0; }

static int in_set(const rank_set *s, int64_t r) {
  for (int i = 0; i < s->n; i++)
    if (r >= s->lo[i] && r <= s->hi[i]) return 1;
  return 0;
}

int iochar_rank_kept(int64_t r) {
  return (!iochar_cfg.ranks || in_set(&ranks_in, r)) &&
         !(iochar_cfg.ranks_exclude && in_set(&ranks_out, r));
}

static uint32_t modules_cfg_off; /* the modules the settings turned off */

void iochar_rank_known(int64_t r) {
  iochar_cfg.modules_off = modules_cfg_off | (iochar_rank_kept(r) ? 0 : ALL_MODULES);
}

int iochar_ranks_kept_text(int64_t nprocs, char *out, size_t outlen) {
  size_t len = 0;
  int cut = 0, some_out = 0;
  out[0] = 0;
  for (int64_t r = 0; r < nprocs && !cut;) {
    if (!iochar_rank_kept(r)) {
      some_out = 1, r++;
      continue;
    }
    int64_t e = r;
    while (e + 1 < nprocs && iochar_rank_kept(e + 1)) e++;
    char item[48];
    int k = e > r ? snprintf(item, sizeof item, "%s%lld-%lld", len ? "," : "", (long long)r,
                             (long long)e)
                  : snprintf(item, sizeof item, "%s%lld", len ? "," : "", (long long)r);
    if (len + (size_t)k + 4 >= outlen) {
      memcpy(out + len, ",...", 5);
      cut = 1;
    } else {
      memcpy(out + len, item, (size_t)k + 1);
      len += (size_t)k;
    }
    r = e + 1;
  }
  if (cut) some_out = 1; /* a cut list: past it, not all kept is the safe word */
  return some_out;
}

void iochar_modules_off_text(char *out, size_t outlen) {
  size_t len = 0;
  out[0] = 0;
  for (size_t i = 0; i < sizeof module_names / sizeof *module_names; i++) {
    uint32_t b = module_names[i].bits;
    /* the single modules' names only (one bit each) */
    if ((b & (b - 1)) || !(modules_cfg_off & b) || !strcmp(module_names[i].name, "MPI-IO") ||
        b == 1u << IOCHAR_MOD_LUSTRE) /* POSIX's: off with it, said by its name */
      continue;
    size_t k = strlen(module_names[i].name);
    if (len + k + 2 > outlen) break;
    if (len) out[len++] = ',';
    memcpy(out + len, module_names[i].name, k + 1);
    len += k;
  }
}

static int regex_ok(const char *v) {
  regex_t re;
  if (regcomp(&re, v, REG_EXTENDED | REG_NOSUB) != 0) return 0;
  regfree(&re);
  return 1;
}

static int max_records_ok(const char *v) {
  char *end;
  unsigned long long n = strtoull(v, &end, 10);
  return v[0] >= '0' && v[0] <= '9' && !*end && n >= 1;
}

static void knobs_load(void) {
  const char *v = setting_ok("IOCHAR_MODULES", modules_ok);
  uint32_t off = v ? ALL_MODULES & ~(uint32_t)module_list(v) : 0;
  if ((v = setting_ok("IOCHAR_DISABLE_MODULES", modules_ok))) off |= (uint32_t)module_list(v);
  /* LUSTRE is not an interface: POSIX's files' layouts (wrappers/posix.c), on with POSIX */
  off = off & (1u << IOCHAR_MOD_POSIX) ? off | 1u << IOCHAR_MOD_LUSTRE
                                       : off & ~(1u << IOCHAR_MOD_LUSTRE);
  modules_cfg_off = off;
  if ((v = setting_ok("IOCHAR_MAX_RECORDS", max_records_ok)))
    iochar_cfg.max_records = strtoull(v, NULL, 10);
  if ((iochar_cfg.ranks = setting_ok("IOCHAR_RANKS", ranks_ok)))
    rank_list(iochar_cfg.ranks, &ranks_in);
  if ((iochar_cfg.ranks_exclude = setting_ok("IOCHAR_RANKS_EXCLUDE", ranks_ok)))
    rank_list(iochar_cfg.ranks_exclude, &ranks_out);
  /* the launcher's rank until MPI_Init says (reducer/lifecycle.c) */
  iochar_rank_known(iochar_envs.launcher_rank);
}

/* The interpreter's program: for python/pypy its script or -m module (past
 * the interpreter's options; -c: none), for the other interpreters the first
 * argument that is not an option (-e: none). */
static const char *script_of(char *const *argv, int argc) {
  const char *interp = base_of(argv[0]);
  static const char *const interps[] = {"python", "pypy", "perl", "ruby", "Rscript",
                                        "julia",  "node", "lua",  "php"};
  size_t k = 0;
  while (k < sizeof interps / sizeof *interps && strncmp(interp, interps[k], strlen(interps[k])))
    k++;
  if (k == sizeof interps / sizeof *interps) return NULL;
  int py = k < 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == 0) return base_of(a);
    if (a[1] == '-') {
      if (a[2] == 0) return i + 1 < argc ? base_of(argv[i + 1]) : NULL;
      continue;
    }
    if (!py) {
      if (a[1] == 'e' || a[1] == 'E') return NULL; /* a command string */
      continue;
    }
    for (const char *o = a + 1; *o; o++) {
      if (*o == 'c') return NULL;
      if (*o == 'm') return o[1] ? o + 1 : i + 1 < argc ? argv[i + 1] : NULL;
      if (*o == 'W' || *o == 'X') {
        if (!o[1]) i++;
        break;
      }
    }
  }
  return NULL;
}

int iochar_app_excluded(const char *exe_basename) {
  const char *inc = setting_ok("IOCHAR_APP_INCLUDE", regex_ok);
  const char *exc = setting_ok("IOCHAR_APP_EXCLUDE", regex_ok);
  if (!inc && !exc) return 0;
  /* the names a pattern is tried on: the executable's, the script's */
  static char buf[4096];
  char *argv[64];
  int argc = 0;
  const char *names[2] = {exe_basename, NULL};
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  if (n > 0) {
    buf[n] = 0;
    for (char *p = buf; p < buf + n && argc < 64; p += strlen(p) + 1) argv[argc++] = p;
    names[1] = script_of(argv, argc);
  }
  int hit[2] = {0, 0}; /* include, exclude */
  const char *pat[2] = {inc, exc};
  for (int k = 0; k < 2; k++) {
    regex_t re;
    if (!pat[k] || regcomp(&re, pat[k], REG_EXTENDED | REG_NOSUB) != 0) continue;
    for (int i = 0; i < 2; i++)
      if (names[i] && regexec(&re, names[i], 0, NULL, 0) == 0) hit[k] = 1;
    regfree(&re);
  }
  /* Darshan's rule: an included program is recorded whatever the exclusion
   * says; with an include pattern alone, only what it matches */
  int out = inc ? !hit[0] && (exc ? hit[1] : 1) : hit[1];
  if (out) iochar_cfg.disabled = 1;
  return out;
}
/* ---- end of issue 41's knobs ---- */

int iochar_config_load(void) {
  const char *v = getenv("IOCHAR_DISABLE");
  if (v && *v && strcmp(v, "0") != 0) {
    iochar_cfg.disabled = 1;
    return -1;
  }
  /* Our own tools read the files too: iochar_setting answers them. */
  const char *named = getenv("IOCHAR_CONFIG");
  if (named && *named) layer_read(&files[0], named, 1);
  layer_read(&files[1], IOCHAR_SITE_FILE, 0);
  if (iochar_is_own_tool()) {
    /* Its children too (addr2line, a browser, Dask workers): IOCHAR_DISABLE
     * is ours to set, and only in our own tools' environment. */
    setenv("IOCHAR_DISABLE", "1", 1);
    iochar_cfg.disabled = 1;
    return -1;
  }
  if (setting_on("IOCHAR_DISABLE")) {
    iochar_cfg.disabled = 1;
    return -1;
  }
  if (file_problems > 1)
    iochar_warn_once(IOCHAR_WARN_CONFIG, "%s (and %d more); the rest applies", file_problem,
                     file_problems - 1);
  else if (file_problems)
    iochar_warn_once(IOCHAR_WARN_CONFIG, "%s; the rest applies", file_problem);
  iochar_cfg.logfile = setting("IOCHAR_LOGFILE");
  iochar_cfg.logdir = setting("IOCHAR_LOGDIR");
  iochar_cfg.logroot = setting("IOCHAR_LOGROOT");
  /* Node-local, in memory (tmpfs) on every Linux node: no write-back to any
   * disk, and no name on a shared file system (docs/deploying.md). */
  iochar_cfg.livedir = setting_ok("IOCHAR_LIVEDIR", absolute_ok);
  if (!iochar_cfg.livedir) iochar_cfg.livedir = "/dev/shm";
  iochar_cfg.memory = IOCHAR_DEFAULT_MEMORY;
  if ((v = setting_ok("IOCHAR_MEMORY", size_ok))) iochar_cfg.memory = iochar_parse_size(v);
  iochar_env *e = &iochar_envs;
  v = setting("IOCHAR_LIVE");
  e->live_off = v && !strcmp(v, "0");
  e->callsites = setting_on("IOCHAR_CALLSITES");
  e->trace = setting_on("IOCHAR_TRACE");
  e->callsites_sample = setting_ok("IOCHAR_CALLSITES_SAMPLE", sample_ok);
  e->trace_memory = setting_ok("IOCHAR_TRACE_MEMORY", size_ok);
  e->exclude_pattern = setting("IOCHAR_EXCLUDE_PATTERN");
  for (size_t i = 0; i < sizeof default_exclude / sizeof *default_exclude; i++) {
    iochar_cfg.exclude[iochar_cfg.nexclude] = default_exclude[i];
    iochar_cfg.exclude_len[iochar_cfg.nexclude++] = strlen(default_exclude[i]);
  }
  add_prefixes(setting("IOCHAR_EXCLUDE"), iochar_cfg.exclude, iochar_cfg.exclude_len,
               &iochar_cfg.nexclude);
  add_prefixes(setting("IOCHAR_INCLUDE"), iochar_cfg.include, iochar_cfg.include_len,
               &iochar_cfg.ninclude);
  /* IOCHAR_JOBID_ENV=NAME: the job id is NAME's value (Darshan's DARSHAN_JOBID) */
  iochar_cfg.jobid_env = setting("IOCHAR_JOBID_ENV");
  if (iochar_cfg.jobid_env) iochar_cfg.batch_jobid = env_set(iochar_cfg.jobid_env);
  static const char *const batch[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID"};
  for (size_t i = 0; i < sizeof batch / sizeof *batch && !iochar_cfg.batch_jobid; i++)
    iochar_cfg.batch_jobid = getenv(batch[i]);
  /* The MPI shutdown's knobs (reducer/): tests and measurements only. */
  iochar_cfg.timing = (v = setting("IOCHAR_TIMING")) && *v == '1';
  iochar_cfg.collective_write = (v = setting("IOCHAR_COLLECTIVE_WRITE")) ? atoi(v) != 0 : -1;
  iochar_cfg.test_fault = getenv("IOCHAR_TEST_FAULT");
  iochar_tmp_unnamed_off = iochar_cfg.test_fault && !strcmp(iochar_cfg.test_fault, "no_tmpfile");
  knobs_load(); /* issue 41 */
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
