# Writes the Lmod modulefile for an install: `cmake -DPREFIX=... -DVERSION=... [-DSITE_PROFILE=...]
# -DOUTPUT=... -P modulefile.cmake`. install() runs it with the prefix given at install time
# (cmake --install --prefix, make install PREFIX=, the Debian package's /usr), so one build installs
# to any prefix. SITE_PROFILE, when not empty, becomes the users' default JOBGEN_PROFILE.
foreach(var PREFIX VERSION OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "modulefile.cmake: -D${var}=... is required")
  endif()
endforeach()
if(PREFIX MATCHES "]==]" OR SITE_PROFILE MATCHES "]==]")
  message(FATAL_ERROR "modulefile.cmake: the prefix or profile contains ]==]")
endif()

set(JOBGEN_PREFIX "${PREFIX}")
set(JOBGEN_VERSION "${VERSION}")
set(JOBGEN_PROFILE_LINE "")
if(NOT "${SITE_PROFILE}" STREQUAL "")
  set(JOBGEN_PROFILE_LINE
      "-- The site's default cluster profile (CMake option JOBGEN_SITE_PROFILE); --profile overrides it.\nsetenv(\"JOBGEN_PROFILE\", [==[${SITE_PROFILE}]==])")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/jobgen.lua.in ${OUTPUT} @ONLY)
