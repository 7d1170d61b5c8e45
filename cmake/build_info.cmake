# Run at every build (cmake -P): writes build_info.cpp with the commit the sources are at
# now, so a result never carries the commit of an older configure. The file is rewritten
# only when its text changes, so an unchanged tree relinks nothing.
# Inputs (-D): SOURCE_DIR, TEMPLATE, OUTPUT, COMMIT_OVERRIDE (may be empty), and the
# configure-time facts CMAKE_BUILD_TYPE, CMAKE_CXX_COMPILER_ID, CMAKE_CXX_COMPILER_VERSION,
# CMAKE_CUDA_COMPILER_VERSION, CMAKE_CUDA_ARCHITECTURES, PROJECT_VERSION.
if(COMMIT_OVERRIDE)
  # A copy of the tree without .git (a remote GPU machine) is told its commit.
  set(GEMMLAB_GIT_COMMIT "${COMMIT_OVERRIDE}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE GEMMLAB_GIT_COMMIT
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND git status --porcelain --untracked-files=no
    WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE GEMMLAB_GIT_DIRTY
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT GEMMLAB_GIT_COMMIT)
    set(GEMMLAB_GIT_COMMIT "unknown")
  elseif(GEMMLAB_GIT_DIRTY)
    string(APPEND GEMMLAB_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file(${TEMPLATE} ${OUTPUT}.new @ONLY)
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
