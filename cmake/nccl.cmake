# NCCL, the optional dependency of the distributed GEMM (src/cuda/nccl/). Looked for where
# it is installed: NCCL_ROOT (variable or environment), the CUDA toolkit's own folders, the
# system's, and the Python package nvidia-nccl-cu* of the python3 on PATH (which ships
# lib/libnccl.so.2 and include/nccl.h but no libnccl.so). Nothing is downloaded.
#
# GEMMLAB_NCCL: AUTO (use it when found), ON (fail without it), OFF (never).
# Sets GEMMLAB_HAVE_NCCL, GEMMLAB_NCCL_VERSION and the imported target gemmlab::nccl.
function(gemmlab_find_nccl)
  set(GEMMLAB_HAVE_NCCL OFF PARENT_SCOPE)
  if(GEMMLAB_NCCL STREQUAL "OFF" OR NOT GEMMLAB_HAVE_CUDA)
    if(GEMMLAB_NCCL STREQUAL "ON")
      message(FATAL_ERROR "GEMMLAB_NCCL=ON needs the CUDA backend, which this configuration does not build")
    endif()
    return()
  endif()

  set(python_prefix "")
  find_program(GEMMLAB_PYTHON3 python3)
  if(GEMMLAB_PYTHON3)
    execute_process(
      COMMAND ${GEMMLAB_PYTHON3} -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE python_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
    if(failed)
      set(python_prefix "")
    endif()
  endif()
  set(roots ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT} ${python_prefix})
  list(TRANSFORM roots APPEND /include OUTPUT_VARIABLE include_hints)
  list(TRANSFORM roots APPEND /lib OUTPUT_VARIABLE lib_hints)

  find_path(GEMMLAB_NCCL_INCLUDE_DIR nccl.h HINTS ${include_hints} ${CUDAToolkit_INCLUDE_DIRS})
  find_library(GEMMLAB_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${lib_hints} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib64 lib/x86_64-linux-gnu)
  if(NOT GEMMLAB_NCCL_INCLUDE_DIR OR NOT GEMMLAB_NCCL_LIBRARY)
    if(GEMMLAB_NCCL STREQUAL "ON")
      message(FATAL_ERROR "GEMMLAB_NCCL=ON but NCCL was not found (nccl.h: ${GEMMLAB_NCCL_INCLUDE_DIR}, "
                          "libnccl: ${GEMMLAB_NCCL_LIBRARY}); set NCCL_ROOT or pip install nvidia-nccl-cu13")
    endif()
    return()
  endif()

  file(STRINGS ${GEMMLAB_NCCL_INCLUDE_DIR}/nccl.h version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  set(version "")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${part} ([0-9]+)" unused "${version_lines}")
    list(APPEND version ${CMAKE_MATCH_1})
  endforeach()
  list(JOIN version "." version)
  # ncclCommInitRankConfig with its config fields, ncclCommSplit and ncclCommGetAsyncError
  # as the driver uses them: NCCL 2.18 or newer.
  if(version VERSION_LESS 2.18)
    if(GEMMLAB_NCCL STREQUAL "ON")
      message(FATAL_ERROR "NCCL ${version} at ${GEMMLAB_NCCL_INCLUDE_DIR} is older than 2.18")
    endif()
    message(STATUS "gemmlab: NCCL ${version} is older than 2.18; the distributed GEMM is not built")
    return()
  endif()

  add_library(gemmlab::nccl UNKNOWN IMPORTED)
  set_target_properties(gemmlab::nccl PROPERTIES IMPORTED_LOCATION ${GEMMLAB_NCCL_LIBRARY}
                                                 INTERFACE_INCLUDE_DIRECTORIES ${GEMMLAB_NCCL_INCLUDE_DIR})
  set(GEMMLAB_HAVE_NCCL ON PARENT_SCOPE)
  set(GEMMLAB_NCCL_VERSION ${version} PARENT_SCOPE)
endfunction()
