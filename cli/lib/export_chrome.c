#include <stdio.h>
#include "export.h"
int export_chrome(const char *path, const char *cap) { (void)path; (void)cap; fprintf(stderr, "todo\n"); return 1; }
