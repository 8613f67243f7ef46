/* The module registry: one line per intercepted interface. */
#include "core.h"

extern const iochar_module iochar_mod_posix, iochar_mod_stdio;
extern const iochar_module iochar_mod_h5f, iochar_mod_h5d;
extern const iochar_module iochar_mod_nc_file, iochar_mod_nc_var;
extern const iochar_module iochar_mod_pnetcdf_file, iochar_mod_pnetcdf_var;
extern const iochar_module iochar_mod_lustre;
extern const iochar_module iochar_mod_mpiio __attribute__((weak)); /* -Dmpi=none */

const iochar_module *const iochar_modules[IOCHAR_MOD_COUNT] = {
    [IOCHAR_MOD_POSIX] = &iochar_mod_posix,
    [IOCHAR_MOD_STDIO] = &iochar_mod_stdio,
    [IOCHAR_MOD_MPIIO] = &iochar_mod_mpiio,
    [IOCHAR_MOD_H5F] = &iochar_mod_h5f,
    [IOCHAR_MOD_H5D] = &iochar_mod_h5d,
    [IOCHAR_MOD_NC_FILE] = &iochar_mod_nc_file,
    [IOCHAR_MOD_NC_VAR] = &iochar_mod_nc_var,
    [IOCHAR_MOD_PNETCDF_FILE] = &iochar_mod_pnetcdf_file,
    [IOCHAR_MOD_PNETCDF_VAR] = &iochar_mod_pnetcdf_var,
    [IOCHAR_MOD_LUSTRE] = &iochar_mod_lustre,
};
