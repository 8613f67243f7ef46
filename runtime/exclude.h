/* Which names are not recorded (runtime/exclude.c). */
#ifndef IOCHAR_EXCLUDE_H
#define IOCHAR_EXCLUDE_H

/* Set up once, after the cwd is known (iochar_paths_init): name patterns,
 * interpreter trees, the prefix index and the log file's own name.  The
 * check itself, iochar_path_excluded, is declared in core.h. */
void iochar_exclude_init(void);
/* abs is byte-code or matches IOCHAR_EXCLUDE_PATTERN (cached per name); no:
 * iochar_path_note_of(abs), what resolve found out about it (or NULL). */
struct iochar_path_note;
int iochar_name_excluded(const char *abs, const struct iochar_path_note *no);

#endif
