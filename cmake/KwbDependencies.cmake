# Every third-party dependency is found here, once, so the target files only name imported targets.

find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.0 REQUIRED)
find_package(CURL REQUIRED)
find_package(SQLite3 REQUIRED)
# CMake 3.30 renamed the imported target (SQLite3::SQLite3) and warns at every use of the old
# one, which Debian 12's CMake 3.25 alone provides.
if(TARGET SQLite3::SQLite3)
    set(KWB_SQLITE_TARGET SQLite3::SQLite3)
else()
    set(KWB_SQLITE_TARGET SQLite::SQLite3)
endif()
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# simdjson (Debian's libsimdjson-dev) reads CUPTI record files and Chrome traces about ten times
# faster than nlohmann-json (a 1M-kernel file in under a second instead of ~10 s). Optional: a
# GPU host without the package reads them with nlohmann-json (engine/timeline/flat_json_object).
find_package(simdjson CONFIG QUIET)
if(simdjson_FOUND)
    message(STATUS "simdjson ${simdjson_VERSION}: fast record and trace reading")
else()
    message(STATUS "simdjson not found: record and trace files are read with nlohmann-json")
endif()
# PCRE2 (Debian's libpcre2-dev) runs the tokenizers' own split patterns, which need Unicode
# properties (\p{L}, \p{N}) that std::regex lacks. Found by header and library, like a bare GPU
# host's packed .deps provide them (no pkg-config there).
find_path(KWB_PCRE2_INCLUDE_DIR pcre2.h REQUIRED)
find_library(KWB_PCRE2_LIBRARY NAMES pcre2-8 REQUIRED)
add_library(Kwb::PCRE2 UNKNOWN IMPORTED)
set_target_properties(Kwb::PCRE2 PROPERTIES IMPORTED_LOCATION "${KWB_PCRE2_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${KWB_PCRE2_INCLUDE_DIR}")

# CUDA: CUPTI is linked (into the injection library only), cudart/cuda.h/nvrtc.h are used for
# headers only. libcuda and libnvrtc are never linked: both are dlopen'ed at run time
# (engine/cuda), so the app starts on machines without a GPU or without the CUDA toolkit.
find_package(CUDAToolkit 12.0 REQUIRED)
get_filename_component(KWB_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
# FindCUDAToolkit makes CUDA::nvrtc (and CUDA::cupti) depend on CUDA::cuda_driver, the stub
# libcuda.so. gcc's --as-needed happened to drop it; a linker without it (clang) made every binary
# need libcuda.so.1 and fail to start on machines without a driver. The driver is dlopen'ed.
foreach(_kwb_cuda_target CUDA::nvrtc CUDA::cupti)
    if(TARGET ${_kwb_cuda_target})
        get_target_property(_kwb_links ${_kwb_cuda_target} INTERFACE_LINK_LIBRARIES)
        if(_kwb_links)
            list(REMOVE_ITEM _kwb_links CUDA::cuda_driver)
            set_target_properties(${_kwb_cuda_target} PROPERTIES INTERFACE_LINK_LIBRARIES "${_kwb_links}")
        endif()
    endif()
endforeach()
if(NOT TARGET CUDA::cupti)
    message(WARNING "CUPTI not found in the CUDA toolkit; timelines will be unavailable")
endif()

include(KwbPython)
if(KWB_WITH_TORCH)
    include(KwbTorch)
endif()

if(KWB_BUILD_GUI)
    find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Test)
    find_package(QScintilla REQUIRED)
    # dtl (libdtl-dev): header-only line diff for the editors' diff view.
    find_path(KWB_DTL_INCLUDE_DIR dtl/dtl.hpp REQUIRED)
endif()

if(KWB_BUILD_TESTS)
    find_package(GTest QUIET)
    if(NOT GTest_FOUND AND DEFINED ENV{KWB_GTEST_SOURCE})
        # GPU hosts may lack a packaged GoogleTest; build it from a source tree carried there.
        set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
        add_subdirectory("$ENV{KWB_GTEST_SOURCE}" "${CMAKE_BINARY_DIR}/_deps/googletest" EXCLUDE_FROM_ALL)
        add_library(GTest::gtest ALIAS gtest)
        add_library(GTest::gtest_main ALIAS gtest_main)
        set(GTest_FOUND TRUE)
    endif()
    if(NOT GTest_FOUND)
        message(FATAL_ERROR "GoogleTest not found: install libgtest-dev or set KWB_GTEST_SOURCE")
    endif()
endif()
