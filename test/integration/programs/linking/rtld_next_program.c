#include <stdio.h>

const char* next_which(void);

int main(void) {
  printf("next after caller: %s\n", next_which());
  return 0;
}
