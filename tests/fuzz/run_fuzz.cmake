# Runs one fuzz target from an empty working corpus (so every run explores the same inputs for
# the same seed), seeded from the checked-in corpus, and fails when libFuzzer finds anything.
#   cmake -DFUZZER=path -DCORPUS=dir[;dir...] -DWORK=dir -DARTIFACTS=dir -DSEED=n -DRUNS=n -DSECONDS=n
#         -P run_fuzz.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(
    COMMAND "${FUZZER}" -seed=${SEED} -runs=${RUNS} -max_total_time=${SECONDS}
            -rss_limit_mb=2048 -print_final_stats=1 "-artifact_prefix=${ARTIFACTS}/"
            "${WORK}" ${CORPUS}
    RESULT_VARIABLE result)
if(NOT result EQUAL 0)
    message(FATAL_ERROR "the fuzzer found a problem (exit ${result}); the input is in ${ARTIFACTS}")
endif()
