# Unity batches: a target's sources compiled a few at a time as one translation unit, so that
# the heavy headers they share (gtest, nlohmann::json, CLI11, cpp-httplib) are parsed and
# instantiated once per batch rather than once per file. Used where a measurement says it pays
# (tests/CMakeLists.txt, NANOSERVE_BATCHED_ROOMS; README, "Build and CI times"). A batch includes
# its files by their path relative to an include directory of the target (`base`), so its text
# is the same in every clone and ccache hits across clones (CMake's own UNITY_BUILD writes
# absolute paths). Files of one batch share a translation unit: names in their anonymous
# namespaces must not clash.
set(NANOSERVE_UNITY_BATCH 4 CACHE STRING
    "Source files compiled together as one translation unit in the batched targets (1: each alone)")

# Sets `out_var` to the batch files standing for `sources` (each under `base`), named after `name`.
function(nanoserve_unity_batches out_var name base sources)
  list(LENGTH sources count)
  if(NANOSERVE_UNITY_BATCH LESS_EQUAL 1 OR count LESS 2)
    set(${out_var} ${sources} PARENT_SCOPE)
    return()
  endif()
  list(SORT sources)
  set(batches "")
  set(text "")
  set(in_batch 0)
  set(index 0)
  foreach(source IN LISTS sources)
    file(RELATIVE_PATH relative ${base} ${source})
    string(APPEND text "#include \"${relative}\"\n")
    math(EXPR in_batch "${in_batch} + 1")
    if(in_batch EQUAL NANOSERVE_UNITY_BATCH)
      set(batch ${CMAKE_CURRENT_BINARY_DIR}/unity/${name}_${index}.cpp)
      file(CONFIGURE OUTPUT ${batch} CONTENT "${text}" @ONLY)  # rewritten only when it changes
      list(APPEND batches ${batch})
      math(EXPR index "${index} + 1")
      set(text "")
      set(in_batch 0)
    endif()
  endforeach()
  if(in_batch GREATER 0)
    set(batch ${CMAKE_CURRENT_BINARY_DIR}/unity/${name}_${index}.cpp)
    file(CONFIGURE OUTPUT ${batch} CONTENT "${text}" @ONLY)
    list(APPEND batches ${batch})
  endif()
  set(${out_var} ${batches} PARENT_SCOPE)
endfunction()
