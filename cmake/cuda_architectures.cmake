# The CUDA architectures gemmlab builds for, chosen before enable_language(CUDA).
#
# Unset (no -DCMAKE_CUDA_ARCHITECTURES, no CUDAARCHS): the visible GPU's, found with
# nvidia-smi; compute capability 9.0 becomes 90a, because the Hopper rungs (TMA, wgmma,
# setmaxnreg, clusters) are arch-specific sm_90a code that plain sm_90 cannot hold. Without
# a GPU: SASS for Turing to Hopper and compute_90 PTX, which the driver compiles for any
# newer GPU (arch-specific compute_90a PTX would load on sm_90 only).
#
# Whatever the list, every entry is checked against what this nvcc can build, so that an
# unknown architecture stops the configure with a message instead of failing deep in nvcc.
#
# Sets, in the caller's scope:
#   CMAKE_CUDA_ARCHITECTURES      the list (cached when chosen here)
#   GEMMLAB_HOPPER_ARCHITECTURES  its sm_90a entries: what the Hopper translation units build
#                                 for; empty when the list has none

set(GEMMLAB_DEFAULT_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90a-real;90-virtual")

# The visible GPUs' compute capabilities as architectures ("90a", "86"), or "" without a GPU.
function(gemmlab_visible_gpu_architectures out)
  set(${out} "" PARENT_SCOPE)
  find_program(GEMMLAB_NVIDIA_SMI nvidia-smi)
  if(NOT GEMMLAB_NVIDIA_SMI)
    return()
  endif()
  execute_process(COMMAND ${GEMMLAB_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET TIMEOUT 20)
  if(NOT rc EQUAL 0)
    return()
  endif()
  string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${caps}")
  set(archs "")
  foreach(cap IN LISTS caps)
    string(REPLACE "." "" arch "${cap}")
    if(arch STREQUAL "90")
      set(arch "90a")
    endif()
    list(APPEND archs ${arch})
  endforeach()
  list(REMOVE_DUPLICATES archs)
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# The architecture numbers this nvcc builds ("75;80;86;...;120"), from nvcc --list-gpu-arch.
function(gemmlab_nvcc_architectures nvcc out)
  execute_process(COMMAND ${nvcc} --list-gpu-arch OUTPUT_VARIABLE listed RESULT_VARIABLE rc ERROR_QUIET)
  string(REGEX MATCHALL "compute_[0-9]+" listed "${listed}")
  string(REPLACE "compute_" "" listed "${listed}")
  list(SORT listed COMPARE NATURAL)
  set(${out} "${listed}" PARENT_SCOPE)
endfunction()

# FATAL_ERROR for an entry of `archs` that is not an architecture `supported` lists, in the
# forms CMake takes: NN, NNa (arch-specific, 90 and later), NNf (family, 100 and later),
# each optionally -real (SASS only) or -virtual (PTX only); or all, all-major.
function(gemmlab_check_cuda_architectures archs supported)
  if(archs STREQUAL "all" OR archs STREQUAL "all-major")
    return()
  endif()
  string(REPLACE ";" " " supported_text "${supported}")
  foreach(entry IN LISTS archs)
    if(NOT entry MATCHES "^([0-9]+)([af]?)(-real|-virtual)?$")
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES: '${entry}' is not an architecture (write 86, 90a, "
                          "80-real or 90-virtual; this nvcc builds ${supported_text}, and 90a for Hopper's "
                          "TMA and wgmma)")
    endif()
    set(number ${CMAKE_MATCH_1})
    set(suffix ${CMAKE_MATCH_2})
    if(NOT number IN_LIST supported)
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES: unknown architecture '${entry}': this nvcc "
                          "(${CMAKE_CUDA_COMPILER}) builds ${supported_text}")
    endif()
    if(suffix STREQUAL "a" AND number LESS 90)
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES: '${entry}': arch-specific targets (a) start at 90a")
    endif()
    if(suffix STREQUAL "f" AND number LESS 100)
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES: '${entry}': family targets (f) start at 100f")
    endif()
  endforeach()
endfunction()

# Run before enable_language(CUDA), with CMAKE_CUDA_COMPILER set.
macro(gemmlab_choose_cuda_architectures)
  gemmlab_nvcc_architectures(${CMAKE_CUDA_COMPILER} _gemmlab_supported)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    gemmlab_visible_gpu_architectures(_gemmlab_visible)
    if(_gemmlab_visible)
      # A GPU newer than this nvcc: no SASS for it, but the newest PTX the driver compiles.
      set(_gemmlab_chosen "")
      foreach(_gemmlab_arch IN LISTS _gemmlab_visible)
        string(REGEX REPLACE "a$" "" _gemmlab_number "${_gemmlab_arch}")
        if(NOT _gemmlab_supported OR _gemmlab_number IN_LIST _gemmlab_supported)
          list(APPEND _gemmlab_chosen ${_gemmlab_arch})
        else()
          list(GET _gemmlab_supported -1 _gemmlab_newest)
          list(APPEND _gemmlab_chosen ${_gemmlab_newest}-virtual)
        endif()
      endforeach()
      set(_gemmlab_why "the visible GPU's")
    else()
      set(_gemmlab_chosen "${GEMMLAB_DEFAULT_CUDA_ARCHITECTURES}")
      set(_gemmlab_why "no GPU visible: Turing to Hopper, and PTX for newer GPUs")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${_gemmlab_chosen}" CACHE STRING "CUDA architectures to build for")
    message(STATUS "gemmlab: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (${_gemmlab_why})")
  elseif(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}" CACHE STRING "CUDA architectures to build for")
  endif()
  # CMake's `native` asks the driver, which says 90 on Hopper: resolve it here, to 90a.
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native")
    gemmlab_visible_gpu_architectures(_gemmlab_visible)
    if(NOT _gemmlab_visible)
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=native, but nvidia-smi shows no GPU")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${_gemmlab_visible}" CACHE STRING "CUDA architectures to build for" FORCE)
  endif()
  if(_gemmlab_supported)
    gemmlab_check_cuda_architectures("${CMAKE_CUDA_ARCHITECTURES}" "${_gemmlab_supported}")
  endif()
  set(GEMMLAB_HOPPER_ARCHITECTURES "")
  foreach(_gemmlab_entry IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(_gemmlab_entry MATCHES "^90a(-real|-virtual)?$")
      list(APPEND GEMMLAB_HOPPER_ARCHITECTURES ${_gemmlab_entry})
    endif()
  endforeach()
endmacro()
