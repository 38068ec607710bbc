dnl AX_CXX_STD17 - require a compiler that accepts -std=c++17 and add it to CXX.
AC_DEFUN([AX_CXX_STD17], [
  AC_MSG_CHECKING([whether $CXX accepts -std=c++17])
  save_CXX="$CXX"
  CXX="$CXX -std=c++17"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <optional>
#include <string_view>]], [[std::optional<std::string_view> v; return v.has_value();]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([a C++17 compiler is required (g++ >= 8)])])
])
