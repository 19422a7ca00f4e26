# Installs the build tree into WORK_DIR/prefix, then configures, builds and runs the consumer.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()
# What a user gets besides the binary: completions for three shells, the manual page, the
# licence and the README.
foreach(f bin/mfu share/bash-completion/completions/mfu share/zsh/site-functions/_mfu
          share/fish/vendor_completions.d/mfu.fish share/man/man1/mfu.1 share/doc/mfu/LICENSE
          share/doc/mfu/README.md)
  if(NOT EXISTS "${WORK_DIR}/prefix/${f}")
    message(FATAL_ERROR "install did not write ${f}")
  endif()
endforeach()
file(READ "${WORK_DIR}/prefix/share/man/man1/mfu.1" man_page)
if(NOT man_page MATCHES "\\.SS analyze")
  message(FATAL_ERROR "the manual page has no analyze section")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build"
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer build failed")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer gave the wrong MFU")
endif()
