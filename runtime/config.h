/* Run-time configuration read once from IOCHAR_* environment variables. */
#ifndef IOCHAR_CONFIG_H
#define IOCHAR_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define IOCHAR_MAX_PREFIXES 64

typedef struct iochar_config {
  int disabled;
  const char *logfile; /* IOCHAR_LOGFILE */
  const char *logdir;  /* IOCHAR_LOGDIR */
  uint64_t memory;     /* IOCHAR_MEMORY, bytes */
  int nexclude, ninclude;
  const char *exclude[IOCHAR_MAX_PREFIXES];
  size_t exclude_len[IOCHAR_MAX_PREFIXES];
  const char *include[IOCHAR_MAX_PREFIXES];
  size_t include_len[IOCHAR_MAX_PREFIXES];
} iochar_config;

extern iochar_config iochar_cfg;

#define IOCHAR_DEFAULT_MEMORY (32u << 20) /* ~20,000 POSIX files */

/* Parse the environment; returns 0, or -1 when the tool must stay off. */
int iochar_config_load(void);
/* "16m" / "2g" / "4096"; returns 0 on a malformed value. */
uint64_t iochar_parse_size(const char *s);
/* Programs that launch others (mpiexec, shells) write no log. */
int iochar_is_launcher(const char *exe_basename);
/* This process is one of iochar's own tools (console scripts, python -m iochar). */
int iochar_is_own_tool(void);

#endif
