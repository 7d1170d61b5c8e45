# The package test (cmake -P, from tests/CMakeLists.txt): installs a build into a fresh
# prefix, then builds examples/consumer against it as a project outside this one would
# (find_package(gemmlab CONFIG), nothing of the source tree on its include path) with the
# same generator and compilers, and runs it.
# Inputs (-D): BUILD_DIR, SOURCE_DIR, WORK_DIR (emptied first), GENERATOR, CXX_COMPILER,
# CONFIG (the build type; for a multi-config generator, the configuration tested), and
# CUDA_TOOLKIT_ROOT (empty for a build without CUDA: the toolkit it was built with).

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "package test: '${command}' failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

# 1. Install, and check what came: headers of include/gemmlab only, the program, the package.
set(install_config "")
if(CONFIG)
  set(install_config --config ${CONFIG})
endif()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} ${install_config})
file(GLOB_RECURSE config_file ${prefix}/*/gemmlabConfig.cmake)
file(GLOB installed_headers RELATIVE ${prefix}/include/gemmlab ${prefix}/include/gemmlab/*)
file(GLOB public_headers RELATIVE ${SOURCE_DIR}/include/gemmlab ${SOURCE_DIR}/include/gemmlab/*.hpp)
list(SORT installed_headers)
list(SORT public_headers)
if(NOT installed_headers STREQUAL public_headers)
  message(FATAL_ERROR "package test: installed headers (${installed_headers}) are not include/gemmlab's (${public_headers})")
endif()
if(NOT config_file OR NOT EXISTS ${prefix}/bin/gemmlab)
  message(FATAL_ERROR "package test: no gemmlabConfig.cmake or bin/gemmlab under ${prefix}")
endif()
run(${prefix}/bin/gemmlab list --backend cpu)

# 2. The consumer: configured, built and run against the installed package alone.
set(cuda_hint "")
if(CUDA_TOOLKIT_ROOT)
  set(cuda_hint -DCUDAToolkit_ROOT=${CUDA_TOOLKIT_ROOT})
endif()
set(build_type "")
if(CONFIG)
  set(build_type -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/consumer -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} ${build_type} ${cuda_hint})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer ${install_config})
file(GLOB_RECURSE app ${WORK_DIR}/consumer/gemmlab_consumer ${WORK_DIR}/consumer/gemmlab_consumer.exe)
if(NOT app)
  message(FATAL_ERROR "package test: the consumer built no program")
endif()
list(GET app 0 app)
run(${app})
