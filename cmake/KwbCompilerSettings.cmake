# Warnings and tooling shared by every target of the project.
find_program(KWB_CCACHE ccache)
if(KWB_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    set(CMAKE_C_COMPILER_LAUNCHER "${KWB_CCACHE}")
    set(CMAKE_CXX_COMPILER_LAUNCHER "${KWB_CCACHE}")
endif()

add_library(kwb_warnings INTERFACE)
target_compile_options(kwb_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)

if(KWB_SANITIZE)
    add_compile_options(-fsanitize=${KWB_SANITIZE} -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${KWB_SANITIZE})
endif()
