# Each library exports an include root of its own that holds only the folders it owns, linked
# into the build tree under their repository names. `#include "engine/..."` reads the same in
# every file, but a folder is reachable only from code that links the library owning it: the
# engine cannot include the agent, and the agent cannot include the widgets, because those
# folders are simply not on their include paths (tools/check_layering.py checks the finer rules).
function(kwb_export_folders target)
    set(root "${PROJECT_BINARY_DIR}/include_roots/${target}")
    foreach(folder IN LISTS ARGN)
        get_filename_component(parent "${root}/${folder}" DIRECTORY)
        file(MAKE_DIRECTORY "${parent}")
        file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${root}/${folder}" SYMBOLIC)
    endforeach()
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
        target_include_directories(${target} INTERFACE "${root}")
    else()
        target_include_directories(${target} PUBLIC "${root}")
    endif()
endfunction()
