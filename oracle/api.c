/* numoracle: library-level entry points. */
#include "nmo_config.h"
#include "numoracle/numoracle.h"

const char *nmo_version(void) { return NMO_VERSION; }
