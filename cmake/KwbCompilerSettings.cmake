# Warnings and tooling shared by every target of the project.
find_program(KWB_CCACHE ccache)
if(KWB_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    # Paths are hashed relative to the checkout, so a fresh clone in another folder (CI's) still
    # hits the cache that earlier builds filled.
    set(_kwb_launcher "${CMAKE_COMMAND}" -E env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}"
                      CCACHE_NOHASHDIR=1 "${KWB_CCACHE}")
    set(CMAKE_C_COMPILER_LAUNCHER ${_kwb_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_kwb_launcher})
endif()

add_library(kwb_warnings INTERFACE)
target_compile_options(kwb_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)

if(KWB_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "KWB_FUZZ needs clang (libFuzzer); use the fuzz preset")
    endif()
    # Coverage feedback for every library the fuzz targets link; the targets add the driver.
    add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(KWB_SANITIZE)
    # A finding ends the process (a failed test), rather than a line in a log nobody reads.
    add_compile_options(-fsanitize=${KWB_SANITIZE} -fno-sanitize-recover=all
                        -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${KWB_SANITIZE})
endif()
