/* numoracle campaign: pieces shared by the engine and the report builder. */
#ifndef NMO_CAMPAIGN_ENGINE_H
#define NMO_CAMPAIGN_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "campaign/campaign.h"

/* A set of 64-bit hashes (run ids). */
typedef struct {
    uint64_t *h;
    size_t cap, n;
} nmo_hset;
uint64_t nmo_hkey(const char *s);
int nmo_hset_has(const nmo_hset *s, uint64_t k);
int nmo_hset_add(nmo_hset *s, uint64_t k); /* 1 added, 0 present, -1 no memory */

enum { NMO_PH_PROBE = 0, NMO_PH_CALIB = 1, NMO_PH_EVAL = 2 };

/* Doubles in journal lines: numbers, or the strings "inf", "-inf", "nan". */
int nmo_eng_jnum(char *buf, size_t n, double x);
double nmo_eng_jget(const cJSON *j);

/* Calibrated p99.9 tolerances per (op, dtype, shape, output) from calib records. */
typedef struct {
    int op, dt, shape, k;
    double atol, rtol;
    long long elements;
} nmo_eng_tol;
typedef struct {
    nmo_eng_tol *t;
    int n;
} nmo_eng_tolset;
nmo_status nmo_eng_calibrate(nmo_eng_tolset *ts, const nmo_camp_cfg *cfg, const char *const *journals, int nj,
                             nmo_err *err);

/* Re-exec without ASLR (once; NMO_CAMPAIGN_ASLR=on in the environment keeps it). */
void nmo_camp_no_aslr(int argc, char **argv);

#endif
