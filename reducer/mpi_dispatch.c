/* One preload library for MPICH and Open MPI programs (-Dmpi=both).
 *
 * The two MPIs differ in ABI (handle types, constants), so meson.build
 * compiles the MPI part (reducer/, wrappers/mpiio*.c) once per MPI's headers
 * and links both copies in, each reduced to one visible symbol: its table of
 * wrappers (reducer/mpi_names.h's order).  This file exports every wrapped
 * MPI_x and PMPI_x as a two-instruction trampoline, `jmp *slot`; a slot first
 * points at a stub that picks the table (once, at the first MPI call of the
 * process, when its MPI is certainly loaded, even by dlopen) from the MPI
 * symbols the process holds, then re-jumps.  The arguments are never touched,
 * so one trampoline serves both ABIs.  With no MPI the tool knows (or one not
 * in the global scope), the slots go straight to the real functions and one
 * `iochar:` line says MPI-IO is not recorded; POSIX and the rest still are.
 *
 * PMPI_x: Open MPI's Fortran bindings call PMPI_x (reducer/mpi_wrap.h), so
 * under Open MPI they reach the wrapper like MPI_x; under MPICH (whose own
 * libraries call PMPI_x) they go straight to the real PMPI_x. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "../runtime/config.h"
#include "../runtime/core.h"
#include "../runtime/warn.h"
#include "mpi_names.h"

#if !defined(__x86_64__)
#error "-Dmpi=both needs x86-64 trampolines; build with -Dmpi=mpich or -Dmpi=openmpi"
#endif

/* Each MPI's copy of the MPI part (absent: that MPI was not built). */
extern const void *const iochar_mpi_table_mpich[] __attribute__((weak));
extern const void *const iochar_mpi_table_openmpi[] __attribute__((weak));

/* Where MPI_x / PMPI_x jump; first to the picking stubs (below). */
#define SLOTS(n)                                                  \
  extern char iochar_first_##n[], iochar_firstp_##n[], n[];       \
  __attribute__((used)) void *iochar_slot_##n = iochar_first_##n; \
  __attribute__((used)) void *iochar_pslot_##n = iochar_firstp_##n;
IOCHAR_MPI_NAMES(SLOTS)
IOCHAR_MPI_NAMES_C(SLOTS)

#define SLOT_ADDR(n) &iochar_slot_##n,
#define PSLOT_ADDR(n) &iochar_pslot_##n,
#define NAME_STR(n) #n,
#define SELF_ADDR(n) (const void *)n,
static void **const slot[] = {IOCHAR_MPI_NAMES(SLOT_ADDR) IOCHAR_MPI_NAMES_C(SLOT_ADDR)};
static void **const pslot[] = {IOCHAR_MPI_NAMES(PSLOT_ADDR) IOCHAR_MPI_NAMES_C(PSLOT_ADDR)};
static const char *const names[] = {IOCHAR_MPI_NAMES(NAME_STR) IOCHAR_MPI_NAMES_C(NAME_STR)};
static const void *const self[] = {IOCHAR_MPI_NAMES(SELF_ADDR) IOCHAR_MPI_NAMES_C(SELF_ADDR)};
_Static_assert(sizeof names / sizeof *names == IOCHAR_MPI_NNAMES, "mpi_names.h count");

/* The trampolines.  A picking stub saves the argument registers (no wrapped
 * function is variadic or takes floating-point arguments), calls
 * iochar_mpi_pick with the stack 16-byte aligned, and jumps on through the
 * slot it has just filled. */
// clang-format off
#define TRAMPOLINES(n)                                                         \
  __asm__(".text\n"                                                            \
          ".globl " #n "\n.type " #n ", @function\n" #n ":\n"                  \
          "  endbr64\n  jmp *iochar_slot_" #n "(%rip)\n.size " #n ", .-" #n "\n" \
          ".globl P" #n "\n.type P" #n ", @function\nP" #n ":\n"               \
          "  endbr64\n  jmp *iochar_pslot_" #n "(%rip)\n.size P" #n ", .-P" #n "\n" \
          ".hidden iochar_first_" #n "\niochar_first_" #n ":\n"                \
          "  endbr64\n  call iochar_mpi_pick_saving\n"                         \
          "  jmp *iochar_slot_" #n "(%rip)\n"                                  \
          ".hidden iochar_firstp_" #n "\niochar_firstp_" #n ":\n"              \
          "  endbr64\n  call iochar_mpi_pick_saving\n"                         \
          "  jmp *iochar_pslot_" #n "(%rip)\n");
IOCHAR_MPI_NAMES(TRAMPOLINES)
IOCHAR_MPI_NAMES_C(TRAMPOLINES)

/* Entered by `call` from a stub entered by `jmp` from MPI_x: the stack is
 * 16-byte aligned here; 7 saves + 8 bytes keep it so for the C call. */
__asm__(".text\n"
        ".hidden iochar_mpi_pick_saving\n"
        "iochar_mpi_pick_saving:\n"
        "  push %rdi\n  push %rsi\n  push %rdx\n  push %rcx\n  push %r8\n  push %r9\n"
        "  push %rax\n  sub $8, %rsp\n"
        "  call iochar_mpi_pick\n"
        "  add $8, %rsp\n"
        "  pop %rax\n  pop %r9\n  pop %r8\n  pop %rcx\n  pop %rdx\n  pop %rsi\n  pop %rdi\n"
        "  ret\n");
// clang-format on

/* A slot with no function behind it: the program called an MPI function that
 * no loaded library defines (without the tool: "undefined symbol", exit 127). */
static void no_such_function(void) {
  static const char m[] = "iochar: an MPI function this process's MPI does not define was "
                          "called; exiting as the dynamic linker would\n";
  ssize_t w = write(2, m, sizeof m - 1);
  (void)w;
  _exit(127);
}

/* The loaded library that defines PMPI_Comm_rank (which we do not export):
 * found even when loaded RTLD_LOCAL.  Names are gathered first and opened
 * after the walk: dlopen is not called under dl_iterate_phdr's lock. */
#define MAX_OBJECTS 512
typedef struct objects {
  const char *name[MAX_OBJECTS];
  int n;
} objects;

static int gather(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  objects *o = arg;
  if (info->dlpi_name && *info->dlpi_name && o->n < MAX_OBJECTS) o->name[o->n++] = info->dlpi_name;
  return 0;
}

static void *find_mpi(void) {
  static objects o; /* under the picking state: one caller at a time */
  o.n = 0;
  dl_iterate_phdr(gather, &o);
  for (int i = 0; i < o.n; i++) {
    void *h = dlopen(o.name[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    if (dlsym(h, "PMPI_Comm_rank")) return h;
    dlclose(h);
  }
  return NULL;
}

static void *real_fn(void *lib, const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (!p && lib) p = dlsym(lib, name);
  return p ? p : (void *)no_such_function;
}

/* Which MPI: Open MPI's predefined objects, or MPICH's error machinery (also
 * in the MPICH-ABI family: Intel MPI, MVAPICH).  Open MPI first: it exports
 * MPIR_* debugger symbols as well. */
void iochar_mpi_pick(void) {
  static int state; /* 0 not picked, 1 picking, 2 done */
  int zero = 0;
  if (!__atomic_compare_exchange_n(&state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2) sched_yield();
    return;
  }
  int e = errno;
  iochar_in_tool++;
  void *lib = find_mpi();
  const void *const *tab = NULL;
  const char *which = NULL;
  int global = dlsym(RTLD_NEXT, "PMPI_Comm_rank") != NULL;
  if (lib && dlsym(lib, "ompi_mpi_comm_world"))
    tab = iochar_mpi_table_openmpi, which = "Open MPI";
  else if (lib && dlsym(lib, "MPIR_Err_create_code"))
    tab = iochar_mpi_table_mpich, which = "MPICH";
  if ((!tab || !global) && !iochar_cfg.disabled) { /* IOCHAR_DISABLE: not a word */
    /* The wrappers resolve PMPI_x and Open MPI's handles in the global scope. */
    const char *why = !lib     ? "no MPI library found in this process"
                      : !which ? "this process's MPI is neither MPICH nor Open MPI"
                      : !tab   ? NULL
                               : "its MPI was loaded RTLD_LOCAL";
    if (why)
      iochar_warn_once(IOCHAR_WARN_MPI_PASSTHROUGH,
                       "%s; MPI calls pass straight through, MPI-IO is not recorded", why);
    else
      iochar_warn_once(IOCHAR_WARN_MPI_PASSTHROUGH,
                       "the program uses %s and this libiochar was built for %s only; MPI "
                       "calls pass straight through, MPI-IO is not recorded (build with "
                       "meson -Dmpi=both, as scripts/setup does, for both)",
                       which, iochar_mpi_table_mpich ? "MPICH" : "Open MPI");
  }
  if (!global) tab = NULL;
  int ompi = tab && tab == iochar_mpi_table_openmpi;
  char pname[64] = "P";
  for (int i = 0; i < IOCHAR_MPI_NNAMES; i++) {
    const void *w = tab ? tab[i] : NULL;
    if (w == self[i]) w = NULL; /* a name with no wrapper in this copy */
    strncpy(pname + 1, names[i], sizeof pname - 2);
    void *real = w ? NULL : real_fn(lib, names[i]);
    void *preal = w && ompi ? NULL : real_fn(lib, pname);
    __atomic_store_n(slot[i], w ? (void *)w : real, __ATOMIC_RELEASE);
    __atomic_store_n(pslot[i], w && ompi ? (void *)w : preal, __ATOMIC_RELEASE);
  }
  iochar_in_tool--;
  errno = e;
  __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
}
