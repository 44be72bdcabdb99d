# CMake package for libmnemo: find_package(mnemo) gives the imported target mnemo::mnemo.
get_filename_component(_mnemo_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET mnemo::mnemo)
  add_library(mnemo::mnemo SHARED IMPORTED)
  find_library(_mnemo_lib NAMES mnemo PATHS "${_mnemo_prefix}/lib" "${_mnemo_prefix}/lib64"
               "${CMAKE_CURRENT_LIST_DIR}/../.." NO_DEFAULT_PATH)
  set_target_properties(mnemo::mnemo PROPERTIES IMPORTED_LOCATION "${_mnemo_lib}"
                        INTERFACE_INCLUDE_DIRECTORIES "${_mnemo_prefix}/include")
endif()
set(mnemo_FOUND TRUE)
