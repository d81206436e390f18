/* The definition RTLD_NEXT from rtld_next_caller must find. */
const char* which(void) { return "target"; }
