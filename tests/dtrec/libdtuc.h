#ifndef DT_LIBDTUC_H
#define DT_LIBDTUC_H
/* Returns 2 * i + who; i and who are what the test checks in arg0, arg1. */
long uc_hit(long i, long who);
#endif
