# The installed library (README "Use difftx from C, C++ and Python"): libdifftx.so, which exports
# the C API of include/difftx/difftx.h and nothing else, and libdifftx.a; their CMake package
# (difftx::difftx, difftx::difftx_static) and pkg-config file; the headers; the difftx binary.
# `cmake --install build/release --prefix P`.
#
# Both libraries are one relocatable object made of difftx_lib and then the further CPU levels'
# kernels (ld -r, whole archives in that order), so that every inline function or template both
# the baseline and a level instantiate keeps the baseline's copy, as in the binary (CMakeLists.txt,
# "CPU levels"; script.cpu_level_isolation_shared checks libdifftx.so). A consumer of the static
# library links that one object whole, whatever it calls.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DIFFTX_WHOLE_OBJECT ${CMAKE_BINARY_DIR}/difftx_whole.o)
set(DIFFTX_WHOLE_ARCHIVES $<TARGET_FILE:difftx_lib>)
foreach(lib ${DIFFTX_LEVEL_LIBS})
  list(APPEND DIFFTX_WHOLE_ARCHIVES $<TARGET_FILE:${lib}>)
endforeach()
add_custom_command(OUTPUT ${DIFFTX_WHOLE_OBJECT}
  COMMAND ${CMAKE_LINKER} -r -o ${DIFFTX_WHOLE_OBJECT} --whole-archive ${DIFFTX_WHOLE_ARCHIVES} --no-whole-archive
  DEPENDS difftx_lib ${DIFFTX_LEVEL_LIBS}
  COMMENT "Linking difftx_whole.o (difftx_lib, then the CPU levels' kernels)" VERBATIM)
add_custom_target(difftx_whole DEPENDS ${DIFFTX_WHOLE_OBJECT})

# What the library links: the shared library itself, and a static library's consumer.
set(DIFFTX_LIB_DEPENDENCIES ${OPENBLAS_LIB} ${OpenMP_CXX_LIBRARIES} ${PCRE2_LINK_LIBRARIES} ${ICU_LINK_LIBRARIES}
  ${HTTPLIB_LINK_LIBRARIES} Threads::Threads ${CMAKE_DL_LIBS} stdc++ m)

add_library(difftx_shared SHARED ${DIFFTX_WHOLE_OBJECT})
add_dependencies(difftx_shared difftx_whole)
# The ABI is MAJOR's, or while MAJOR is 0 MINOR's too (0.x structs grow): the SONAME says which.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(DIFFTX_ABI_VERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  set(DIFFTX_PACKAGE_COMPATIBILITY SameMinorVersion)
else()
  set(DIFFTX_ABI_VERSION ${PROJECT_VERSION_MAJOR})
  set(DIFFTX_PACKAGE_COMPATIBILITY SameMajorVersion)
endif()
set_target_properties(difftx_shared PROPERTIES OUTPUT_NAME difftx EXPORT_NAME difftx LINKER_LANGUAGE CXX
  VERSION ${PROJECT_VERSION} SOVERSION ${DIFFTX_ABI_VERSION}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/difftx.map)
target_link_options(difftx_shared PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/difftx.map ${OpenMP_CXX_FLAGS})
if(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")  # a sanitizer's runtime comes with the executable
  target_link_options(difftx_shared PRIVATE -Wl,--no-undefined)
endif()
target_link_libraries(difftx_shared PRIVATE ${DIFFTX_LIB_DEPENDENCIES})
target_include_directories(difftx_shared INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

add_library(difftx_static STATIC ${DIFFTX_WHOLE_OBJECT})
add_dependencies(difftx_static difftx_whole)
set_target_properties(difftx_static PROPERTIES OUTPUT_NAME difftx EXPORT_NAME difftx_static LINKER_LANGUAGE CXX
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_link_libraries(difftx_static INTERFACE ${DIFFTX_LIB_DEPENDENCIES})
target_include_directories(difftx_static INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

install(TARGETS difftx_shared difftx_static EXPORT difftxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS difftx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET difftx_mpi)  # beside the binary, where it looks for it (src/dist/launch.cpp)
  install(TARGETS difftx_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY include/difftx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(DIFFTX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/difftx)
install(EXPORT difftxTargets NAMESPACE difftx:: DESTINATION ${DIFFTX_CMAKE_DIR})
configure_package_config_file(cmake/difftxConfig.cmake.in ${CMAKE_BINARY_DIR}/difftxConfig.cmake
  INSTALL_DESTINATION ${DIFFTX_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/difftxConfigVersion.cmake COMPATIBILITY ${DIFFTX_PACKAGE_COMPATIBILITY})
install(FILES ${CMAKE_BINARY_DIR}/difftxConfig.cmake ${CMAKE_BINARY_DIR}/difftxConfigVersion.cmake
  DESTINATION ${DIFFTX_CMAKE_DIR})

# pkg-config: relocatable (prefix from the .pc file's own place); Libs.private for --static.
file(RELATIVE_PATH DIFFTX_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(DIFFTX_PC_LIBS_PRIVATE "")
foreach(lib ${OPENBLAS_LIB} ${OpenMP_CXX_LIBRARIES} ${PCRE2_LINK_LIBRARIES} ${ICU_LINK_LIBRARIES}
            ${HTTPLIB_LINK_LIBRARIES} ${CMAKE_DL_LIBS} pthread stdc++ m)
  if(IS_ABSOLUTE ${lib})
    string(APPEND DIFFTX_PC_LIBS_PRIVATE " ${lib}")
  else()
    string(APPEND DIFFTX_PC_LIBS_PRIVATE " -l${lib}")
  endif()
endforeach()
string(STRIP "${DIFFTX_PC_LIBS_PRIVATE}" DIFFTX_PC_LIBS_PRIVATE)
configure_file(cmake/difftx.pc.in ${CMAKE_BINARY_DIR}/difftx.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/difftx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
