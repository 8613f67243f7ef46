/* The module registry: one line per intercepted interface. */
#include "core.h"

extern const iochar_module iochar_mod_posix, iochar_mod_stdio;

const iochar_module *const iochar_modules[IOCHAR_MOD_COUNT] = {
    [IOCHAR_MOD_POSIX] = &iochar_mod_posix,
    [IOCHAR_MOD_STDIO] = &iochar_mod_stdio,
};
