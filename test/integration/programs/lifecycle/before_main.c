/* Its trace begins before main, in a linked library's constructor (before_main_lib.c);
   main then returns 7 (or, with an argument, calls exit(5)). */
#include <stdlib.h>

int before_main_lib_allocated(void);

int main(int argc, char** argv) {
  (void)argv;
  if (!before_main_lib_allocated()) return 2;
  if (argc > 1) exit(5);
  return 7;
}
