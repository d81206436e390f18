/* Preloaded by run_test.cpp in place of libcumemtrace.so: loads, does nothing. */
int cumemtrace_test_preload_marker = 1;
