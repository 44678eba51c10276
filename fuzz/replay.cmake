# Corpus replays in the normal build (included by tests/CMakeLists.txt): fuzz_replay_<name> is
# fuzz/fuzz_<name>.cpp with replay_main.cpp instead of libFuzzer, so it builds with GCC too, and
# the test fuzz.<name> (label fast) runs it on fuzz/corpus/<name>/. The sanitized build checks
# every committed input under AddressSanitizer (and UBSan in the libraries) in seconds.
# A -DWITNESS_FUZZ=ON build instruments the libraries for libFuzzer, which these drivers do not
# link: there the fuzz_<name> binaries replay a corpus themselves (fuzz_<name> DIR -runs=0).
if(WITNESS_FUZZ)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/targets.cmake)
add_library(fuzz_replay_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp)  # compiled once for all
target_compile_options(fuzz_replay_main PRIVATE ${WITNESS_WARNINGS} ${WITNESS_TEST_SANITIZE_FLAGS} ${WITNESS_COLD_FLAGS})
foreach(name ${WITNESS_FUZZ_TARGETS})
  add_executable(fuzz_replay_${name} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${name}.cpp $<TARGET_OBJECTS:fuzz_replay_main>)
  target_compile_options(fuzz_replay_${name} PRIVATE ${WITNESS_WARNINGS} ${WITNESS_TEST_SANITIZE_FLAGS} ${WITNESS_COLD_FLAGS})
  target_link_libraries(fuzz_replay_${name} PRIVATE ${WITNESS_FUZZ_LIBS_${name}})
  target_compile_definitions(fuzz_replay_${name} PRIVATE WITNESS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  witness_precompiled(fuzz_replay_${name} cold)
  add_test(NAME fuzz.${name} COMMAND fuzz_replay_${name} ${CMAKE_CURRENT_LIST_DIR}/corpus/${name})
  set_tests_properties(fuzz.${name} PROPERTIES LABELS fast TIMEOUT 120)
endforeach()
