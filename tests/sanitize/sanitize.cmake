# Sanitizer builds: -DHEAPKIT_SANITIZE=address|undefined|thread (tests/README.md, "Sanitizer
# builds"; tests/scripts/sanitizer_builds.sh configures, builds and runs them).
#
# One knob, and only the code that can run under that sanitizer is instrumented:
#   address    pprof-tool (its libraries, the symbolizer, the safe-file helper) and its tests.
#   undefined  the same, plus the runtime (alloc/, profiler/, heapcheck/) and its unit tests.
#   thread     the allocator's objects, its unit tests and the stress program's allocator-API
#              variant (tests/stress, heapkit_stress_api): they drive the allocator without
#              making it the process's malloc.
# The allocator is never instrumented as the process allocator under address or thread: both
# sanitizers replace malloc/free themselves (their interceptors and shadow memory track every
# heap block), so a program cannot have heapkit and ASan/TSan as its allocator at once -
# whichever malloc wins, the other's bookkeeping never sees the blocks. UBSan replaces nothing,
# so under `undefined` the runtime is checked in every role it has.
#
# Every binary of a sanitizer build links the sanitizer runtime (add_link_options below): the
# instrumented objects are shared (libheapkit takes the symbolizer's objects, the tests link the
# static libraries). Only the tests labelled for that sanitizer are meaningful there
# (tests/scripts/sanitizer_builds.sh builds just what they need).
set(HEAPKIT_SANITIZE "" CACHE STRING
  "Sanitizer build: address, undefined or thread (empty: none). See tests/README.md")
set_property(CACHE HEAPKIT_SANITIZE PROPERTY STRINGS "" address undefined thread)
if(NOT HEAPKIT_SANITIZE STREQUAL "" AND NOT HEAPKIT_SANITIZE MATCHES "^(address|undefined|thread)$")
  message(FATAL_ERROR "HEAPKIT_SANITIZE='${HEAPKIT_SANITIZE}': expected address, undefined or "
                      "thread (or empty for no sanitizer)")
endif()

if(HEAPKIT_SANITIZE)
  set(HEAPKIT_SANITIZE_FLAGS -fsanitize=${HEAPKIT_SANITIZE} -fno-omit-frame-pointer)
  if(HEAPKIT_SANITIZE STREQUAL undefined)
    # Every finding is fatal: a test cannot pass with undefined behaviour reported.
    list(APPEND HEAPKIT_SANITIZE_FLAGS -fno-sanitize-recover=all)
  endif()
  add_link_options(-fsanitize=${HEAPKIT_SANITIZE})
endif()

# The compiling targets defined in <dir> and the directories below it.
function(heapkit_targets_below dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    heapkit_targets_below(${sub} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Called once at the end of the top-level CMakeLists.txt, when every target exists.
function(heapkit_apply_sanitizer)
  if(NOT HEAPKIT_SANITIZE)
    return()
  endif()
  set(src ${PROJECT_SOURCE_DIR})
  if(HEAPKIT_SANITIZE STREQUAL thread)
    set(dirs ${src}/tests/stress ${src}/tests/alloc/unit)
    set(extra heapkit_alloc_objs)
  else()
    set(dirs ${src}/pprof-tool ${src}/tests/pprof_tool ${src}/tests/profiler/symbolize)
    set(extra heapkit_safe_file robust_truncation_check)
    if(HEAPKIT_SANITIZE STREQUAL undefined)
      list(APPEND dirs ${src}/alloc ${src}/profiler ${src}/heapcheck ${src}/tests/alloc/unit
        ${src}/tests/profiler/capture ${src}/tests/profiler/table ${src}/tests/profiler/format
        ${src}/tests/profiler/time ${src}/tests/profiler/http/unit ${src}/tests/heapcheck
        ${src}/tests/stress)
    endif()
  endif()
  set(targets ${extra})
  foreach(dir ${dirs})
    if(IS_DIRECTORY ${dir})
      heapkit_targets_below(${dir} below)
      list(APPEND targets ${below})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES targets)
  # The stack-capture test's call chains are built for their code shape (no frame pointers in
  # one, frame pointers in the other, leaves that never save rbp): the sanitizer's flags
  # (-fno-omit-frame-pointer, its checks' calls) would change the very frames they test.
  list(REMOVE_ITEM targets heapkit_profiler_test_chain heapkit_profiler_test_fp_chain)
  foreach(t ${targets})
    if(TARGET ${t})
      target_compile_options(${t} PRIVATE ${HEAPKIT_SANITIZE_FLAGS})
      get_target_property(type ${t} TYPE)
      if(HEAPKIT_SANITIZE STREQUAL address AND type STREQUAL EXECUTABLE)
        target_sources(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sanitize/lsan_suppressions.cc)
      endif()
    endif()
  endforeach()
  list(LENGTH targets n)
  message(STATUS "HEAPKIT_SANITIZE=${HEAPKIT_SANITIZE}: ${n} targets instrumented")
endfunction()
