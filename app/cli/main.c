#include "mnemo.h"
int main(void) { return 0; }
