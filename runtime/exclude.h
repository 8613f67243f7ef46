/* Which names are not recorded (runtime/exclude.c). */
#ifndef IOCHAR_EXCLUDE_H
#define IOCHAR_EXCLUDE_H

/* runtime/exclude.c: name patterns and interpreter trees, set up once (it
 * adds exclusion prefixes: before the prefix index is built). */
void iochar_exclude_init(void);
/* abs is byte-code or matches IOCHAR_EXCLUDE_PATTERN (cached per name); no:
 * iochar_path_note_of(abs), what resolve found out about it (or NULL). */
struct iochar_path_note;
int iochar_name_excluded(const char *abs, const struct iochar_path_note *no);

#endif
