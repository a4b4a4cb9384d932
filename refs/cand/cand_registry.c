/* numoracle: the CPU candidate registry — the per-operator candidate arrays, in the
 * order of refs/meson.build's operator list. Within an operator, correct variants come
 * first; the first correct one is the operator's default. Adding candidates for an
 * operator: refs/cand/<op>_cand.c exporting `nmo_cand_<op>[]` / `nmo_cand_<op>_n`; the
 * operator list in refs/meson.build drives both registries. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "numoracle/cand.h"

#define NMO_OP(name)                                                                     \
    extern const nmo_cand nmo_cand_##name[];                                             \
    extern const int nmo_cand_##name##_n;
#include "nmo_ops.def"
#undef NMO_OP

static const struct {
    const nmo_cand *c;
    const int *n;
} groups[] = {
#define NMO_OP(name) {nmo_cand_##name, &nmo_cand_##name##_n},
#include "nmo_ops.def"
#undef NMO_OP
};
#define NGROUPS ((int)(sizeof groups / sizeof groups[0]))

int nmo_cand_count(void) {
    int n = 0;
    for (int g = 0; g < NGROUPS; g++) n += *groups[g].n;
    return n;
}

const nmo_cand *nmo_cand_at(int i) {
    if (i < 0) return NULL;
    for (int g = 0; g < NGROUPS; g++) {
        if (i < *groups[g].n) return &groups[g].c[i];
        i -= *groups[g].n;
    }
    return NULL;
}

const nmo_cand *nmo_cand_find(const char *op, const char *name) {
    if (!op) return NULL;
    int want_default = !name || !name[0];
    for (int g = 0; g < NGROUPS; g++) {
        for (int i = 0; i < *groups[g].n; i++) {
            const nmo_cand *c = &groups[g].c[i];
            if (strcmp(c->op, op) != 0) continue;
            if (want_default ? c->correct : strcmp(c->name, name) == 0) return c;
        }
    }
    return NULL;
}

nmo_status nmo_cand_plan(nmo_plan *p, const nmo_cand *c, nmo_fmt dt, nmo_err *err)
{
    nmo_plan_default(p, dt);
    if (!c || !c->plan) return NMO_OK;
    /* "{dtype}" -> the storage dtype's name, as hip/validate/torch_suite.py substitutes */
    char text[256];
    size_t o = 0;
    for (const char *q = c->plan; *q && o + 16 < sizeof text;) {
        if (strncmp(q, "{dtype}", 7) == 0) {
            o += (size_t)snprintf(text + o, sizeof text - o, "%s", nmo_fmt_name(dt));
            q += 7;
        } else {
            text[o++] = *q++;
        }
    }
    text[o] = 0;
    return nmo_plan_parse(p, text, err);
}
