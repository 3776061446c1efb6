# libtorch comes from the Python torch the tasks run with, so the C++ side and the task side
# always agree on the version. Debian's libtorch-dev is only a fallback.
set(KWB_TORCH_VERSION "")
if(KWB_PYTHON_EXECUTABLE)
    execute_process(
        COMMAND "${KWB_PYTHON_EXECUTABLE}" -c
                "import torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.__version__)"
        OUTPUT_VARIABLE _kwb_torch_out
        ERROR_QUIET
        RESULT_VARIABLE _kwb_torch_rc
        OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_kwb_torch_rc EQUAL 0)
        string(REPLACE "\n" ";" _kwb_torch_lines "${_kwb_torch_out}")
        list(GET _kwb_torch_lines 0 _kwb_torch_prefix)
        list(GET _kwb_torch_lines 1 KWB_TORCH_VERSION)
        list(APPEND CMAKE_PREFIX_PATH "${_kwb_torch_prefix}")
    endif()
endif()

# Torch's config otherwise test-compiles a CUDA program to detect the local GPU, which fails on
# machines without one; we only need its headers and libraries, never its nvcc flags.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch QUIET)
if(Torch_FOUND)
    if(NOT KWB_TORCH_VERSION)
        set(KWB_TORCH_VERSION "system libtorch")
    endif()
    message(STATUS "libtorch: ${KWB_TORCH_VERSION} (${TORCH_INSTALL_PREFIX})")
    add_library(kwb_torch INTERFACE)
    target_link_libraries(kwb_torch INTERFACE ${TORCH_LIBRARIES})
    target_include_directories(kwb_torch INTERFACE ${TORCH_INCLUDE_DIRS})
else()
    message(WARNING "libtorch not found; building without it (set KWB_PYTHON to a Python with torch)")
    set(KWB_WITH_TORCH OFF)
    set(KWB_TORCH_VERSION "")
endif()
