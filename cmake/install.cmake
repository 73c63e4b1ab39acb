# install.cmake: `cmake --install BUILD --prefix P` and the files that let C
# projects use what it installs (included at the end of CMakeLists.txt).
#
#   P/bin/relayc                                the compiler (needs nothing else from P)
#   P/lib/librelayc_runtime.a                   the runtime, position independent
#   P/include/relayc/runtime.h                  its API
#   P/include/dlpack/dlpack.h                   the DLPack header it was built with
#   P/lib/pkgconfig/relayc-runtime.pc           pkg-config --cflags --libs relayc-runtime
#   P/lib/cmake/relayc/relaycConfig.cmake       find_package(relayc CONFIG): relayc::runtime,
#   P/lib/cmake/relayc/relaycConfigVersion.cmake  relayc::relayc
#
# (lib is CMAKE_INSTALL_LIBDIR, from GNUInstallDirs.) Every installed file
# finds the others relative to its own location (${pcfiledir}, the config
# file's directory), so the tree may be moved after installation.
#
# Sanitizer and fuzz builds install instrumented code that ordinary programs
# cannot link; the rules stay, but the install test runs only without them.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# One version for relayc --version, the .pc file and the CMake package.
file(STRINGS ${PROJECT_SOURCE_DIR}/tools/relayc/main.c rly_version_line
     REGEX "^#define RELAYC_VERSION \"[0-9]+\\.[0-9]+\\.[0-9]+\"")
if(NOT rly_version_line)
  message(FATAL_ERROR "cmake/install.cmake: no '#define RELAYC_VERSION \"X.Y.Z\"' in tools/relayc/main.c")
endif()
string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" RLY_VERSION "${rly_version_line}")

# The DLPack header the build used (the same cache entry as the driver's).
find_path(RLY_DLPACK_INCLUDE_DIR dlpack/dlpack.h REQUIRED)

# {==== What gets installed ====}
install(TARGETS relayc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS relayc_runtime ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# (relayc.h, the compiler's API, is not installed: its library is not yet.)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/relayc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "relayc.h" EXCLUDE)
install(FILES ${RLY_DLPACK_INCLUDE_DIR}/dlpack/dlpack.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlpack)

# {==== The runtime's link dependencies, for both package files ====}
# Read from relayc_runtime itself, so that a dependency added in
# CMakeLists.txt reaches the installed files: a plain library name (m, dl)
# becomes -lNAME, Threads::Threads the thread flag. A static library's
# dependencies go into the .pc file's Libs (not Libs.private), so that
# `pkg-config --libs` links without --static.
get_target_property(rly_runtime_deps relayc_runtime INTERFACE_LINK_LIBRARIES)
if(NOT rly_runtime_deps)
  set(rly_runtime_deps "")
endif()
set(RLY_CONFIG_LIBS "")
set(RLY_CONFIG_DEPENDENCIES "")
set(RLY_PC_LIBS "")
foreach(dep IN LISTS rly_runtime_deps)
  # A static library's private dependencies appear as $<LINK_ONLY:dep>.
  string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
  if(dep STREQUAL "Threads::Threads")
    list(APPEND RLY_CONFIG_LIBS Threads::Threads)
    set(RLY_CONFIG_DEPENDENCIES "find_dependency(Threads)")
    if(CMAKE_THREAD_LIBS_INIT)
      list(APPEND RLY_PC_LIBS ${CMAKE_THREAD_LIBS_INIT})
    else()
      list(APPEND RLY_PC_LIBS -lpthread)  # threads are in libc; the stub library is harmless
    endif()
  elseif(dep MATCHES "^-")
    list(APPEND RLY_CONFIG_LIBS ${dep})
    list(APPEND RLY_PC_LIBS ${dep})
  elseif(dep MATCHES "^[A-Za-z0-9_.+-]+$" AND NOT TARGET ${dep})
    list(APPEND RLY_CONFIG_LIBS ${dep})
    list(APPEND RLY_PC_LIBS -l${dep})
  elseif(IS_ABSOLUTE "${dep}" AND NOT dep MATCHES "[$<>]")
    list(APPEND RLY_CONFIG_LIBS ${dep})  # a system library's file, kept as is
    list(APPEND RLY_PC_LIBS ${dep})
  else()
    message(FATAL_ERROR "cmake/install.cmake: relayc_runtime links '${dep}', which the installed "
                        "package files cannot express; teach cmake/install.cmake how to export it")
  endif()
endforeach()
list(REMOVE_DUPLICATES RLY_PC_LIBS)
string(REPLACE ";" " " RLY_PC_LIBS "${RLY_PC_LIBS}")

set(RLY_RUNTIME_FILE ${CMAKE_STATIC_LIBRARY_PREFIX}relayc_runtime${CMAKE_STATIC_LIBRARY_SUFFIX})
set(RLY_RELAYC_FILE relayc${CMAKE_EXECUTABLE_SUFFIX})
set(rly_gen ${PROJECT_BINARY_DIR}/install-files)

# {==== pkg-config ====}
# prefix is the .pc file's directory less CMAKE_INSTALL_LIBDIR/pkgconfig.
set(rly_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${rly_pcdir}")
  set(RLY_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")  # an absolute libdir: not relocatable
else()
  file(RELATIVE_PATH rly_up "/prefix/${rly_pcdir}" "/prefix")
  string(REGEX REPLACE "/$" "" rly_up "${rly_up}")
  set(RLY_PC_PREFIX "\${pcfiledir}/${rly_up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(RLY_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(RLY_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/relayc-runtime.pc.in ${rly_gen}/relayc-runtime.pc @ONLY)
install(FILES ${rly_gen}/relayc-runtime.pc DESTINATION ${rly_pcdir})

# {==== CMake package ====}
set(rly_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/relayc)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/relaycConfig.cmake.in ${rly_gen}/relaycConfig.cmake
                              INSTALL_DESTINATION ${rly_cmakedir}
                              PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API.
write_basic_package_version_file(${rly_gen}/relaycConfigVersion.cmake VERSION ${RLY_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${rly_gen}/relaycConfig.cmake ${rly_gen}/relaycConfigVersion.cmake DESTINATION ${rly_cmakedir})

# {==== The install test ====}
# Installs the build tree into a temporary prefix and builds small C
# programs against it (pkg-config, CMake, after moving the prefix).
if(NOT RLY_SANITIZE AND NOT RLY_FUZZ)
  add_test(NAME install
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/tools/install_test.sh ${PROJECT_BINARY_DIR} ${CMAKE_COMMAND}
                   ${CMAKE_C_COMPILER} ${CMAKE_INSTALL_BINDIR} ${CMAKE_INSTALL_LIBDIR} ${CMAKE_INSTALL_INCLUDEDIR})
  set_tests_properties(install PROPERTIES LABELS install TIMEOUT 600)
endif()
