/* Fuzz the plan parser: any text is parsed or refused with a message; an accepted plan
 * prints to a text that parses back to the same plan (no field lost or invented). */
#include "fuzz_common.h"
#include "numoracle/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t) return 0;
    memcpy(t, data, size);
    t[size] = '\0';
    for (int dt = 0; dt < 3; dt++) {
        nmo_fmt f = dt == 0 ? NMO_FP32 : dt == 1 ? NMO_BF16 : NMO_FP16;
        nmo_plan p;
        nmo_plan_default(&p, f);
        nmo_err e;
        if (nmo_plan_parse(&p, t, &e) != NMO_OK) {
            if (!e.msg[0]) abort(); /* a refusal always says why */
            continue;
        }
        char s1[1024], s2[1024];
        nmo_plan_to_string(&p, s1, sizeof s1);
        nmo_plan q;
        nmo_plan_default(&q, f);
        if (nmo_plan_parse(&q, s1, &e) != NMO_OK) abort();
        nmo_plan_to_string(&q, s2, sizeof s2);
        if (strcmp(s1, s2) != 0) abort();
    }
    free(t);
    return 0;
}
