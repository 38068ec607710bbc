dnl ALLOT_HTTPLIB - decide the cpp-httplib differences allot-scimd's front end meets.
dnl
dnl allot-scimd reads each request itself (scim/server.hpp) and hands it, whole, to
dnl httplib's request processing through a Stream of its own; both of those changed
dnl upstream. Each difference is a probe compiled against the httplib.h in use
dnl ($HTTPLIB_CFLAGS) and lands in config.h as one HAVE_HTTPLIB_* define, read only by
dnl compat/httplib.hpp. Debian: bookworm 0.11, trixie 0.18, sid 0.41.
dnl _ALLOT_HTTPLIB_PROBE(what, prologue, body, define, description)
AC_DEFUN([_ALLOT_HTTPLIB_PROBE], [
  AC_MSG_CHECKING([$1])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <httplib.h>]
$2], [$3])],
    [AC_MSG_RESULT([yes]); AC_DEFINE([$4], [1], [$5])], [AC_MSG_RESULT([no])])])

AC_DEFUN([ALLOT_HTTPLIB], [
  save_CPPFLAGS="$CPPFLAGS"
  CPPFLAGS="$CPPFLAGS $HTTPLIB_CFLAGS"
  dnl 0.11: process_request(strm, close_connection, connection_closed, setup_request);
  dnl 0.18 and later take the peer's and the local address and port before those.
  _ALLOT_HTTPLIB_PROBE([whether httplib's process_request takes the addresses],
    [[struct P : httplib::Server {
  bool f(httplib::Stream& s) { bool c = false;
    return process_request(s, std::string(), 0, std::string(), 0, false, c, nullptr); }
};]], [[return 0;]], [HAVE_HTTPLIB_PROCESS_REQUEST_ADDRESSES],
    [Define if httplib::Server::process_request takes remote and local address and port (0.18+).])
  dnl 0.11 and 0.18: Stream::is_writable(); 0.41: wait_readable(), wait_writable(), duration().
  _ALLOT_HTTPLIB_PROBE([for httplib::Stream::is_writable],
    [], [[auto f = &httplib::Stream::is_writable; (void)f;]], [HAVE_HTTPLIB_STREAM_IS_WRITABLE],
    [Define if httplib::Stream has is_writable() (up to 0.2x).])
  _ALLOT_HTTPLIB_PROBE([for httplib::Stream::wait_writable],
    [], [[auto f = &httplib::Stream::wait_writable; (void)f;]], [HAVE_HTTPLIB_STREAM_WAIT_WRITABLE],
    [Define if httplib::Stream has wait_readable() and wait_writable().])
  _ALLOT_HTTPLIB_PROBE([for httplib::Stream::duration],
    [], [[auto f = &httplib::Stream::duration; (void)f;]], [HAVE_HTTPLIB_STREAM_DURATION],
    [Define if httplib::Stream has duration().])
  CPPFLAGS="$save_CPPFLAGS"
])
