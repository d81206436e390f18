/* Loads the library named by argv[1] ("local" or "global" in argv[2]) and calls go(). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char** argv) {
  int mode = RTLD_NOW | (argc > 2 && !strcmp(argv[2], "global") ? RTLD_GLOBAL : RTLD_LOCAL);
  void* h = dlopen(argv[1], mode);
  if (!h) {
    printf("%s\n", dlerror());
    return 1;
  }
  int (*f)(void) = (int (*)(void))dlsym(h, "go");
  int r = f();
  printf("go=%d\n", r);
  return 0;
}
