/* numoracle campaign: run argv[0] (PATH searched) in dir with stderr discarded; its
 * standard output in *out (malloc'd, NUL-terminated, *len bytes). 0 when it exited 0. */
#ifndef NMO_CAMPAIGN_SPAWN_H
#define NMO_CAMPAIGN_SPAWN_H
#include <stddef.h>
int nmo_camp_run_capture(const char *dir, char *const argv[], char **out, size_t *len);
#endif
