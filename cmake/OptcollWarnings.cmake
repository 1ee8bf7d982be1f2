# Warning flags shared by every optcoll target, through an INTERFACE target.
add_library(optcoll_warnings INTERFACE)
target_compile_options(optcoll_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough)
if(OPTCOLL_WERROR)
  target_compile_options(optcoll_warnings INTERFACE -Werror)
endif()
