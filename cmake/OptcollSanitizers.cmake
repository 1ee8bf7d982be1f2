# OPTCOLL_SANITIZE="address;undefined" or "thread": applied to every target in the build.
if(OPTCOLL_SANITIZE)
  string(REPLACE ";" "," _optcoll_san "${OPTCOLL_SANITIZE}")
  message(STATUS "optcoll: building with -fsanitize=${_optcoll_san}")
  add_compile_options(-fsanitize=${_optcoll_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_optcoll_san})
endif()
