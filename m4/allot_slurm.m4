dnl ALLOT_SLURM - find Slurm's installed headers and plugin directory.
dnl
dnl Everything that differs between Slurm releases is decided here from
dnl SLURM_VERSION_NUMBER and exported as HAVE_* / ALLOT_* defines, so that
dnl plugins/job_submit/slurm_compat.hpp is the only C++ that knows about versions.
AC_DEFUN([ALLOT_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=DIR], [Slurm installation prefix (headers in DIR/include/slurm)])],
    [SLURM_CPPFLAGS="-I$withval/include"; slurm_libdir="$withval/lib"],
    [SLURM_CPPFLAGS=""; slurm_libdir=""])
  save_CPPFLAGS="$CPPFLAGS"
  CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  for h in slurm/slurm.h slurm/slurm_version.h slurm/spank.h slurm/slurmdb.h slurm/slurm_errno.h; do
    AC_CHECK_HEADER([$h], [],
      [AC_MSG_ERROR([Slurm header $h not found; install Slurm's development headers (Debian: apt-get install libslurm-dev; RPM: slurm-devel) or pass --with-slurm=DIR])],
      [[#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>]])
  done
  AC_MSG_CHECKING([Slurm version])
  AC_COMPUTE_INT([slurm_version_number], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>],
    [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER])])
  SLURM_VERSION_STRING=$(printf '%d.%02d.%d' $(( slurm_version_number >> 16 )) $(( (slurm_version_number >> 8) & 255 )) $(( slurm_version_number & 255 )))
  SLURM_MAJOR_MINOR=$(printf '%d.%02d' $(( slurm_version_number >> 16 )) $(( (slurm_version_number >> 8) & 255 )))
  AC_MSG_RESULT([$SLURM_VERSION_STRING])
  AS_IF([test $slurm_version_number -lt $(( 0x160500 ))],
    [AC_MSG_ERROR([Slurm $SLURM_VERSION_STRING is too old; allot needs 22.05 or later])])
  dnl job_modify() gained an err_msg argument in 23.02.
  AS_IF([test $slurm_version_number -ge $(( 0x170200 ))],
    [AC_DEFINE([ALLOT_JOB_MODIFY_HAS_ERR_MSG], [1], [job_modify() takes char **err_msg (Slurm >= 23.02)])])
  CPPFLAGS="$save_CPPFLAGS"

  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where Slurm loads plugins from])],
    [SLURM_PLUGINDIR=$withval],
    [SLURM_PLUGINDIR=""
     for d in $slurm_libdir/slurm /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
       AS_IF([test -d "$d"], [SLURM_PLUGINDIR=$d; break])
     done
     AS_IF([test -z "$SLURM_PLUGINDIR"], [SLURM_PLUGINDIR='${libdir}/slurm'])])
  dnl libslurmfull provides the slurm_x* allocator and assoc_mgr to the daemons;
  dnl tests load it to resolve the plugins' undefined symbols exactly as slurmctld does.
  SLURM_FULL_LIB=""
  for f in $SLURM_PLUGINDIR/libslurmfull.so $slurm_libdir/slurm/libslurmfull.so; do
    AS_IF([test -f "$f"], [SLURM_FULL_LIB=$f; break])
  done
  AS_IF([test -z "$SLURM_FULL_LIB"],
    [AC_MSG_WARN([libslurmfull.so not found: plugin load tests will be skipped])])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_FULL_LIB])
  AC_SUBST([SLURM_VERSION_STRING])
  AC_SUBST([SLURM_MAJOR_MINOR])
  AC_DEFINE_UNQUOTED([ALLOT_SLURM_VERSION_STRING], ["$SLURM_VERSION_STRING"], [Slurm release built against])
])
