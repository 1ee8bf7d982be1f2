# install(): library archives, headers, the CLI, and a CMake package so that users can
# find_package(optcoll) and link optcoll::optcoll (C++), or optcoll::optcoll_capi (the C API
# as a shared library, for C projects: its export set is separate, optcollCTargets, and needs
# only MPI's C library). The C API's files are also the component "capi"
# (cmake --install BUILD --component capi), which is all a C project needs.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
# The experiments (optcoll/experiments/) are the CLI's, not the library's: neither their
# headers nor their archive are installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/optcoll/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/optcoll
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "experiments" EXCLUDE)
install(TARGETS optcoll_model optcoll_schedule optcoll_verify optcoll_algorithms optcoll_sim
                optcoll_exec optcoll_plan optcoll_api optcoll optcoll_warnings
        EXPORT optcollTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS optcoll_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(OPTCOLL_HAVE_MPI)
  # The MPI backend, the API's calls on it, the C API (include/optcoll.h) and the PMPI library.
  install(TARGETS optcoll_exec_mpi optcoll_api_mpi optcoll_c EXPORT optcollTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/include/optcoll.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  if(TARGET optcoll_pmpi)
    install(TARGETS optcoll_pmpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endif()
if(TARGET optcoll_capi)
  install(TARGETS optcoll_capi EXPORT optcollCTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT capi NAMELINK_COMPONENT capi
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/include/optcoll.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          COMPONENT capi)
  install(EXPORT optcollCTargets NAMESPACE optcoll:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/optcoll
          COMPONENT capi)
endif()
install(EXPORT optcollTargets NAMESPACE optcoll:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/optcoll)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/optcollConfig.cmake.in
  ${PROJECT_BINARY_DIR}/optcollConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/optcoll)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/optcollConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/optcollConfig.cmake ${PROJECT_BINARY_DIR}/optcollConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/optcoll COMPONENT capi)
