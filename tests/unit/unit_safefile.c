/* Unit tests of the "another user could write here" rule (iochar_dir_shared,
 * runtime/safefile.c): modes, the sticky bit, the owner, and POSIX ACLs, both
 * hand-built system.posix_acl_access values and ones setfacl(1) makes.  Run
 * as root (chown to another uid); exit 77 (skipped) otherwise. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../runtime/safefile.h"

#include "expect.h"

static char dir[4096];

static void reset(mode_t mode, uid_t uid) {
  removexattr(dir, "system.posix_acl_access");
  if (chown(dir, uid, 0) != 0 || chmod(dir, mode) != 0) {
    perror(dir);
    exit(1);
  }
}

/* An access ACL as the kernel stores it: version 2, then (tag, perm, id). */
static int set_acl(const uint16_t (*e)[2], const uint32_t *ids, int n) {
  uint8_t b[4 + 8 * 16] = {2, 0, 0, 0};
  for (int i = 0; i < n; i++) {
    uint8_t *p = b + 4 + 8 * i;
    p[0] = (uint8_t)e[i][0], p[1] = (uint8_t)(e[i][0] >> 8);
    p[2] = (uint8_t)e[i][1], p[3] = 0;
    for (int k = 0; k < 4; k++) p[4 + k] = (uint8_t)(ids[i] >> 8 * k);
  }
  return setxattr(dir, "system.posix_acl_access", b, 4 + 8 * (size_t)n, 0);
}

enum { UOBJ = 1, USER = 2, GOBJ = 4, GROUP = 8, MASK = 0x10, OTHER = 0x20 };
#define NONE 0xffffffffu

static void acl_cases(void) {
  /* A named group with write, mask rwx: shared. */
  static const uint16_t g_w[][2] = {{UOBJ, 7}, {GOBJ, 5}, {GROUP, 7}, {MASK, 7}, {OTHER, 5}};
  static const uint32_t g_ids[] = {NONE, NONE, 65534, NONE, NONE};
  reset(0755, 0);
  if (set_acl(g_w, g_ids, 5) != 0) {
    printf("# the file system of %s keeps no POSIX ACL (%s): ACL cases not run\n", dir,
           strerror(errno));
    return;
  }
  EXPECT(iochar_dir_shared(dir), 1);
  /* The same entry under a mask without write: not shared. */
  static const uint16_t g_masked[][2] = {{UOBJ, 7}, {GOBJ, 7}, {GROUP, 7}, {MASK, 5}, {OTHER, 5}};
  reset(0755, 0);
  EXPECT(set_acl(g_masked, g_ids, 5), 0);
  EXPECT(iochar_dir_shared(dir), 0);
  /* A named user (not us) with write: shared; the same entry for us: not
   * (the mode's group bits, the mask, say rwx: the ACL decides). */
  static const uint16_t u_w[][2] = {{UOBJ, 7}, {USER, 3}, {GOBJ, 5}, {MASK, 7}, {OTHER, 5}};
  static const uint32_t u_other[] = {NONE, 65534, NONE, NONE, NONE};
  uint32_t u_self[] = {NONE, (uint32_t)geteuid(), NONE, NONE, NONE};
  reset(0755, 0);
  EXPECT(set_acl(u_w, u_other, 5), 0);
  EXPECT(iochar_dir_shared(dir), 1);
  reset(0755, 0);
  EXPECT(set_acl(u_w, u_self, 5), 0);
  EXPECT(iochar_dir_shared(dir), 0);
  /* A named user with read only: not shared, whatever the mask. */
  static const uint16_t u_r[][2] = {{UOBJ, 7}, {USER, 5}, {GOBJ, 5}, {MASK, 7}, {OTHER, 5}};
  reset(0755, 0);
  EXPECT(set_acl(u_r, u_other, 5), 0);
  EXPECT(iochar_dir_shared(dir), 0);
  /* The owning group's write under a mask that allows it: shared. */
  static const uint16_t gobj_w[][2] = {{UOBJ, 7}, {USER, 5}, {GOBJ, 7}, {MASK, 7}, {OTHER, 5}};
  reset(0755, 0);
  EXPECT(set_acl(gobj_w, u_other, 5), 0);
  EXPECT(iochar_dir_shared(dir), 1);
  /* A write entry in a sticky directory: only a name's owner may rename it. */
  reset(01755, 0);
  EXPECT(set_acl(g_w, g_ids, 5), 0);
  EXPECT(iochar_dir_shared(dir), 0);

  /* The same through setfacl(1), the way a site sets a project directory. */
  if (system("command -v setfacl >/dev/null 2>&1") != 0) {
    printf("# setfacl is not installed (Debian package acl): its cases not run\n");
    return;
  }
  char cmd[4200];
  reset(0755, 0);
  snprintf(cmd, sizeof cmd, "setfacl -m g:65534:rwx '%s'", dir);
  EXPECT(system(cmd), 0);
  EXPECT(iochar_dir_shared(dir), 1);
  snprintf(cmd, sizeof cmd, "setfacl -m m::r-x '%s'", dir); /* mask without write */
  EXPECT(system(cmd), 0);
  EXPECT(iochar_dir_shared(dir), 0);
  reset(0755, 0);
  snprintf(cmd, sizeof cmd, "setfacl -m u:65534:r-x '%s'", dir);
  EXPECT(system(cmd), 0);
  EXPECT(iochar_dir_shared(dir), 0);
  snprintf(cmd, sizeof cmd, "setfacl -m u:65534:rwx '%s'", dir);
  EXPECT(system(cmd), 0);
  EXPECT(iochar_dir_shared(dir), 1);
}

int main(void) {
  if (geteuid() != 0) {
    printf("# needs root (chown to another uid)\n");
    return 77;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/unit_safefile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  static const struct {
    mode_t mode;
    uid_t uid;
    int shared;
  } cases[] =
      {
          {0700, 0, 0},      {0755, 0, 0},     {0775, 0, 1},  {02775, 0, 1},
          {01775, 0, 0},     {0757, 0, 1},     {01777, 0, 1}, {0777, 0, 1},
          {0770, 0, 1},      {0700, 65534, 1}, /* another owner may rename anything in it */
          {01755, 65534, 1},
      };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    reset(cases[i].mode, cases[i].uid);
    if (iochar_dir_shared(dir) != cases[i].shared)
      fprintf(stderr, "mode %04o uid %d: ", (unsigned)cases[i].mode, (int)cases[i].uid);
    EXPECT(iochar_dir_shared(dir), cases[i].shared);
  }
  acl_cases();
  reset(0700, 0);
  rmdir(dir);
  EXPECT(iochar_dir_shared(dir), 0); /* gone: not examined (creating fails anyway) */
  return failures != 0;
}
