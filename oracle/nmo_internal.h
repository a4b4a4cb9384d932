/* numoracle internal helpers shared inside oracle/ (not installed). */
#ifndef NMO_INTERNAL_H
#define NMO_INTERNAL_H

#include <cjson/cJSON.h>
#include "numoracle/plan.h"

/* JSON form of a plan (every field, names as in the text form). */
cJSON *nmo_plan_to_json(const nmo_plan *p);

#endif
