dnl ALLOT_SLURM - find Slurm's installed headers and plugin directory, and decide every
dnl difference between Slurm releases that allot's code meets.
dnl
dnl Each difference is a probe compiled (or linked) against the headers and library in use
dnl and lands in config.h as one HAVE_* or ALLOT_* define; only the compat headers
dnl (compat/slurm.hpp, compat/slurmctld.hpp, compat/spank.hpp) read those defines.
dnl docs/slurm-versions.md lists them with the release each one changed in.
AC_DEFUN([ALLOT_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=DIR], [Slurm installation prefix (headers in DIR/include/slurm)])],
    [SLURM_CPPFLAGS="-I$withval/include"
     for d in "$withval/lib64" "$withval/lib"; do
       AS_IF([test -e "$d/libslurm.so"], [slurm_libdir=$d; break], [slurm_libdir="$withval/lib"])
     done
     SLURM_LIBS="-L$slurm_libdir -Wl,-rpath,$slurm_libdir -lslurm"],
    [SLURM_CPPFLAGS=""; slurm_libdir=""; SLURM_LIBS="-lslurm"])
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
  ALLOT_SLURM_PROBES
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
  AC_SUBST([SLURM_LIBS])
  AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_FULL_LIB])
  AC_SUBST([SLURM_VERSION_STRING])
  AC_SUBST([SLURM_MAJOR_MINOR])
  AC_DEFINE_UNQUOTED([ALLOT_SLURM_VERSION_STRING], ["$SLURM_VERSION_STRING"], [Slurm release built against])
])

dnl allot_slurm_includes - the prologue of every probe: Slurm's public headers as C.
m4_define([allot_slurm_includes], [[#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
}]])

dnl ALLOT_SLURM_PROBES - one probe per API difference (CPPFLAGS already point at Slurm's).
AC_DEFUN([ALLOT_SLURM_PROBES], [
  dnl 23.11 renamed the list handles: List -> list_t *, ListIterator -> list_itr_t *.
  AC_MSG_CHECKING([for list_t and list_itr_t])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[list_t *l = slurm_list_create(NULL); list_itr_t *i = slurm_list_iterator_create(l); (void)i;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_LIST_T], [1], [slurm.h names list handles list_t and list_itr_t (Slurm >= 23.11)])],
    [AC_MSG_RESULT([no])])

  dnl 24.05 removed slurm_get_errno(): libslurm reports through errno alone.
  AC_MSG_CHECKING([for slurm_get_errno])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes], [[return slurm_get_errno();]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_SLURM_GET_ERRNO], [1], [slurm_errno.h declares slurm_get_errno() (Slurm < 24.05)])],
    [AC_MSG_RESULT([no])])

  dnl 26.05 renamed slurm_free_ctl_conf() (what slurm_load_ctl_conf hands back) slurm_free_conf().
  AC_MSG_CHECKING([for slurm_free_conf])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes], [[void (*f)(slurm_conf_t *) = slurm_free_conf; (void)f;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_SLURM_FREE_CONF], [1], [slurm.h frees slurm_load_ctl_conf's answer with slurm_free_conf() (Slurm >= 26.05)])],
    [AC_MSG_RESULT([no])])

  dnl 26.05 names a job by slurm_step_id_t: job_desc_msg_t.step_id, slurm_load_job(step_id).
  AC_MSG_CHECKING([for job_desc_msg_t.step_id])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[job_desc_msg_t d; d.step_id.job_id = 1; (void)d;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_JOB_DESC_STEP_ID], [1], [job_desc_msg_t has step_id, not job_id (Slurm >= 26.05)])],
    [AC_MSG_RESULT([no])])
  AC_MSG_CHECKING([whether slurm_load_job takes a slurm_step_id_t])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[int (*f)(job_info_msg_t **, slurm_step_id_t, uint16_t) = slurm_load_job; (void)f;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_SLURM_LOAD_JOB_STEP_ID], [1], [slurm_load_job(resp, slurm_step_id_t, flags) (Slurm >= 26.05)])],
    [AC_MSG_RESULT([no])])

  dnl 26.05 dropped node_info_t.select_nodeinfo; the allocated TRES became a field.
  AC_MSG_CHECKING([for node_info_t.alloc_tres_fmt_str])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[node_info_t n; n.alloc_tres_fmt_str = NULL; (void)n;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_NODE_INFO_ALLOC_TRES], [1], [node_info_t carries alloc_tres_fmt_str (Slurm >= 26.05)])],
    [AC_MSG_RESULT([no])])

  dnl 24.11 folded slurmdb_qos_cond_t.with_deleted into flags (QOS_COND_FLAG_WITH_DELETED).
  AC_MSG_CHECKING([for QOS_COND_FLAG_WITH_DELETED])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[slurmdb_qos_cond_t c; c.flags = QOS_COND_FLAG_WITH_DELETED; (void)c;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_QOS_COND_FLAGS], [1], [slurmdb_qos_cond_t asks for deleted QOS by a flag bit (Slurm >= 24.11)])],
    [AC_MSG_RESULT([no])])

  dnl The job_submit plugin API (src/interfaces/job_submit.c) is in no installed header;
  dnl job_modify() gained `char **err_msg` in 23.02, the release whose headers also gained
  dnl PreemptParameters (slurm_conf_t.preempt_params). Probe that header change.
  AC_MSG_CHECKING([for slurm_conf_t.preempt_params])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[slurm_conf_t c; c.preempt_params = NULL; (void)c;]])],
    [allot_preempt_params=yes], [allot_preempt_params=no])
  AC_MSG_RESULT([$allot_preempt_params])
  AS_IF([test "x$allot_preempt_params" = xyes],
    [AC_DEFINE([HAVE_JOB_MODIFY_ERR_MSG], [1],
       [job_modify() takes char **err_msg (Slurm >= 23.02)])
     SLURM_PREEMPT_SIGNAL_CONF="PreemptParameters=send_user_signal"],
    [SLURM_PREEMPT_SIGNAL_CONF="SlurmctldParameters=preempt_send_user_signal"])
  dnl The slurm.conf line that sends a preempted job's batch script its --signal
  dnl (read by slurmctld's node_scheduler.c from either place since 23.02; 22.05 knows
  dnl only the SlurmctldParameters form, and 23.02+ document only PreemptParameters).
  AC_SUBST([SLURM_PREEMPT_SIGNAL_CONF])

  dnl 26.05 gives a job submitted without -N an implicit node maximum of one per task
  dnl (JOB_IMPLICIT_MAX_NODES in its bitflags, set after job_submit) and schedules it on its
  dnl minimum: a job record read back at job_modify must not be counted at that maximum.
  AC_MSG_CHECKING([for JOB_IMPLICIT_MAX_NODES])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes],
      [[job_desc_msg_t d; d.bitflags = JOB_IMPLICIT_MAX_NODES; (void)d;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_JOB_IMPLICIT_MAX_NODES], [1],
       [a job's node maximum can be implicit, flagged JOB_IMPLICIT_MAX_NODES (Slurm >= 26.05)])],
    [AC_MSG_RESULT([no])])

  dnl How slurmctld spells a GPU request in job_desc's tres_per_* (23.02: gres/gpu).
  AC_MSG_CHECKING([how Slurm spells GPU TRES in job requests])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes], [[
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
#error gres:gpu
#endif
]])], [allot_gpu_prefix="gres/gpu:"], [allot_gpu_prefix="gres:gpu:"])
  AC_MSG_RESULT([$allot_gpu_prefix])
  AC_DEFINE_UNQUOTED([ALLOT_GPU_TRES_PREFIX], ["$allot_gpu_prefix"],
    [prefix of a GPU count in job_desc tres_per_* fields])

  dnl Functions libslurm exports without declaring them: decided by linking.
  save_LIBS="$LIBS"
  LIBS="$SLURM_LIBS $LIBS"
  AC_MSG_CHECKING([for libslurm])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes], [[slurm_init(NULL);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([cannot link libslurm ($SLURM_LIBS); Debian: apt-get install libslurm-dev])])
  dnl 23.11 moved job_reason_string() to job_state_reason_string() (returns const char *).
  AC_CHECK_FUNCS([slurm_job_state_reason_string slurm_job_reason_string])
  AS_IF([test "x$ac_cv_func_slurm_job_state_reason_string$ac_cv_func_slurm_job_reason_string" = xnono],
    [AC_MSG_ERROR([libslurm exports neither slurm_job_state_reason_string nor slurm_job_reason_string])])
  LIBS="$save_LIBS"

  dnl SPANK: the items spank_allot reads, and spank.h's own linkage.
  AC_MSG_CHECKING([for the SPANK items spank_allot reads])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([allot_slurm_includes
[extern "C" {
#include <slurm/spank.h>
}]], [[spank_item_t items[] = {S_JOB_ID, S_JOB_UID}; (void)items;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([slurm/spank.h lacks S_JOB_ID or S_JOB_UID])])
])
