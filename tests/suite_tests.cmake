# Turns one gtest executable into ctest tests, one per test suite (run after each build of the
# executable; see witness_layer_tests in tests/CMakeLists.txt). One process per suite rather than
# per test case: starting a sanitized test process costs about 0.3 s (the Z3 and TBB libraries
# loaded, relocated and instrumented), which over 500 cases was a sixth of CI's sanitized pass.
# The cases named in SLOW (label slow) still get a test each, so that they run only on request.
#
#   cmake -DTEST_EXECUTABLE=tests/test_core -DPREFIX=core. -DSLOW="C.z*"
#         -DWORKDIR=<dir> -DCTEST_FILE=<out>.cmake -P tests/suite_tests.cmake
cmake_minimum_required(VERSION 3.25)

# gtest's filter patterns (`*` and `?`) as one CMake regular expression.
function(patterns_regex patterns out)
  set(alternatives "")
  string(REPLACE ":" ";" patterns "${patterns}")
  foreach(p IN LISTS patterns)
    if(p STREQUAL "")
      continue()
    endif()
    string(REGEX REPLACE "([][.+^$()|\\\\])" "\\\\\\1" p "${p}")
    string(REPLACE "*" ".*" p "${p}")
    string(REPLACE "?" "." p "${p}")
    list(APPEND alternatives "${p}")
  endforeach()
  if(alternatives)
    list(JOIN alternatives "|" joined)
    set(${out} "^(${joined})$" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests WORKING_DIRECTORY "${WORKDIR}" TIMEOUT 60
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${rc}): ${errors}")
endif()
patterns_regex("${SLOW}" slow_regex)

set(script "")
set(suite "")
set(cases "")
# add_suite: the suite's remaining cases as one test.
macro(add_suite)
  if(cases)
    list(JOIN cases ":" filter)
    string(APPEND script "add_test([=[${PREFIX}${suite}]=] [=[${TEST_EXECUTABLE}]=] [=[--gtest_filter=${filter}]=])\n"
                         "set_tests_properties([=[${PREFIX}${suite}]=] PROPERTIES LABELS fast "
                         "WORKING_DIRECTORY [=[${WORKDIR}]=])\n")
  endif()
  set(cases "")
endmacro()

string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  string(REGEX REPLACE " *#.*" "" line "${line}")  # parameterised cases' comments
  if(line MATCHES "^([^ ]+)\\.$")
    add_suite()
    set(suite "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^  ([^ ]+)$")
    set(name "${suite}.${CMAKE_MATCH_1}")
    if(slow_regex AND name MATCHES "${slow_regex}")
      string(APPEND script "add_test([=[${PREFIX}${name}]=] [=[${TEST_EXECUTABLE}]=] [=[--gtest_filter=${name}]=])\n"
                           "set_tests_properties([=[${PREFIX}${name}]=] PROPERTIES LABELS slow "
                           "WORKING_DIRECTORY [=[${WORKDIR}]=])\n")
    else()
      list(APPEND cases "${name}")
    endif()
  endif()
endforeach()
add_suite()
file(WRITE "${CTEST_FILE}" "${script}")
