/* numoracle campaign: reports — a pure function of the journal(s).
 *
 * Streams every journal line once (records deduplicated by id, so shard journals can be
 * merged and a resumed journal counts each run once), joins every mutant run with the
 * run of its base candidate on the same input, and writes report.json (deterministic:
 * no times, sorted lists), report.md and report.html (inline SVG, no external files).
 *
 * Definitions (the paper's): a mutant is effective on a family class when some run of
 * it there differs bitwise from its base; a check detects it there when, on one input,
 * the check FAILs the mutant and PASSes the base. False alarms: FAIL on a correct run
 * (the default variant: "correct"; other correct variants: "bp", behaviour-preserving).
 * numoracle INCONCLUSIVE is neither a pass nor a false alarm; it is counted. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "campaign/campaign.h"
#include "campaign/engine.h"
#include "nmo_internal.h"

/* ---------------------------------------------------------------- line reader */

typedef int (*line_fn)(void *ctx, cJSON *rec, const char *line);

/* Call fn on every complete, parseable line of every journal, each record id once. */
static nmo_status stream(const char *const *journals, int nj, line_fn fn, void *ctx, nmo_err *err)
{
    nmo_hset seen = {0};
    char *line = NULL;
    size_t cap = 0;
    nmo_status st = NMO_OK;
    for (int f = 0; f < nj && st == NMO_OK; f++) {
        FILE *fp = nmo__fopen_regular(journals[f], err);
        if (!fp) {
            st = NMO_ERR_IO;
            break;
        }
        ssize_t n;
        while ((n = getline(&line, &cap, fp)) > 0) {
            if (line[n - 1] != '\n') break; /* torn last line */
            line[n - 1] = '\0';
            cJSON *rec = cJSON_Parse(line);
            if (!rec) continue;
            const cJSON *ty = cJSON_GetObjectItemCaseSensitive(rec, "type");
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(rec, "id");
            if (cJSON_IsString(ty) && cJSON_IsString(id)) {
                char key[700];
                snprintf(key, sizeof key, "%s|%s", ty->valuestring, id->valuestring);
                if (nmo_hset_add(&seen, nmo_hkey(key)) == 1 && fn(ctx, rec, line) != 0) {
                    cJSON_Delete(rec);
                    st = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory reading %s", journals[f]);
                    break;
                }
            } else if (cJSON_IsString(ty) && strcmp(ty->valuestring, "header") == 0) {
                fn(ctx, rec, line);
            }
            cJSON_Delete(rec);
        }
        fclose(fp);
    }
    free(line);
    free(seen.h);
    return st;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(j) ? j->valuestring : "";
}

static double jnum(const cJSON *o, const char *k)
{
    return nmo_eng_jget(cJSON_GetObjectItemCaseSensitive(o, k));
}

static int op_index(const nmo_camp_cfg *cfg, const char *name)
{
    for (int i = 0; i < cfg->nops; i++)
        if (strcmp(cfg->ops[i]->name, name) == 0) return i;
    return -1;
}

static int dt_index(const nmo_camp_cfg *cfg, const char *name)
{
    for (int i = 0; i < cfg->ndt; i++)
        if (strcmp(nmo_fmt_name(cfg->dt[i]), name) == 0) return i;
    return -1;
}

static int shape_index(const nmo_camp_cfg *cfg, int op, const char *name)
{
    for (int i = 0; i < cfg->nshapes[op]; i++)
        if (strcmp(cfg->shapes[op][i].text, name) == 0) return i;
    return -1;
}

static int fam_of(const char *name)
{
    nmo_family f;
    return nmo_family_from_name(&f, name) == NMO_OK ? (int)f : -1;
}

static int fam_class(const nmo_camp_cfg *cfg, int fam) /* 0 main, 1 shifted, -1 neither */
{
    for (int i = 0; i < cfg->nmain; i++)
        if (cfg->fam_main[i] == fam) return 0;
    for (int i = 0; i < cfg->nshift; i++)
        if (cfg->fam_shift[i] == fam) return 1;
    return -1;
}

/* ---------------------------------------------------------------- calibration */

typedef struct {
    const nmo_camp_cfg *cfg;
    /* histograms per (op, dt, shape, k, kind): sparse maps bin -> count */
    struct hist {
        int op, dt, shape, k, kind;
        int n, cap;
        int *bin;
        long long *cnt;
        long long total;
    } *h;
    int nh, caph;
} calib_ctx;

static struct hist *hist_get(calib_ctx *c, int op, int dt, int shape, int k, int kind)
{
    for (int i = 0; i < c->nh; i++)
        if (c->h[i].op == op && c->h[i].dt == dt && c->h[i].shape == shape && c->h[i].k == k && c->h[i].kind == kind)
            return &c->h[i];
    if (c->nh == c->caph) {
        int nc = c->caph ? 2 * c->caph : 64;
        struct hist *nh = realloc(c->h, (size_t)nc * sizeof *nh);
        if (!nh) return NULL;
        c->h = nh;
        c->caph = nc;
    }
    struct hist *h = &c->h[c->nh++];
    memset(h, 0, sizeof *h);
    h->op = op, h->dt = dt, h->shape = shape, h->k = k, h->kind = kind;
    return h;
}

static int hist_add(struct hist *h, int bin, long long cnt)
{
    for (int i = 0; i < h->n; i++)
        if (h->bin[i] == bin) {
            h->cnt[i] += cnt;
            h->total += cnt;
            return 0;
        }
    if (h->n == h->cap) {
        int nc = h->cap ? 2 * h->cap : 64;
        int *nb = realloc(h->bin, (size_t)nc * sizeof *nb);
        long long *ncn = realloc(h->cnt, (size_t)nc * sizeof *ncn);
        if (!nb || !ncn) return -1;
        h->bin = nb, h->cnt = ncn, h->cap = nc;
    }
    h->bin[h->n] = bin;
    h->cnt[h->n] = cnt;
    h->n++;
    h->total += cnt;
    return 0;
}

static int calib_line(void *vc, cJSON *rec, const char *line)
{
    (void)line;
    calib_ctx *c = vc;
    if (strcmp(jstr(rec, "type"), "run") != 0 || strcmp(jstr(rec, "phase"), "calib") != 0) return 0;
    if (strcmp(jstr(rec, "status"), "ok") != 0) return 0;
    int op = op_index(c->cfg, jstr(rec, "op"));
    if (op < 0) return 0;
    int dt = dt_index(c->cfg, jstr(rec, "dtype")), sh = shape_index(c->cfg, op, jstr(rec, "shape"));
    if (dt < 0 || sh < 0) return 0;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(rec, "h");
    int k = 0;
    for (const cJSON *o = h ? h->child : NULL; o; o = o->next, k++)
        for (int kind = 0; kind < 2; kind++) {
            const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, kind ? "rel" : "abs");
            struct hist *hh = hist_get(c, op, dt, sh, k, kind);
            if (!hh) return -1;
            for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
                const cJSON *b = cJSON_GetArrayItem(e, 0), *n = cJSON_GetArrayItem(e, 1);
                if (cJSON_IsNumber(b) && cJSON_IsNumber(n) && hist_add(hh, (int)b->valuedouble, (long long)n->valuedouble))
                    return -1;
            }
        }
    return 0;
}

static double hist_quantile(struct hist *h, double q)
{
    if (!h || h->total == 0) return NAN;
    /* sort bins */
    for (int i = 1; i < h->n; i++) {
        int b = h->bin[i];
        long long c = h->cnt[i];
        int j = i - 1;
        while (j >= 0 && h->bin[j] > b) {
            h->bin[j + 1] = h->bin[j];
            h->cnt[j + 1] = h->cnt[j];
            j--;
        }
        h->bin[j + 1] = b;
        h->cnt[j + 1] = c;
    }
    long long want = (long long)ceil(q * (double)h->total);
    if (want < 1) want = 1;
    long long acc = 0;
    for (int i = 0; i < h->n; i++) {
        acc += h->cnt[i];
        if (acc >= want) return nmo_ck_hbin_upper(h->bin[i]);
    }
    return nmo_ck_hbin_upper(h->bin[h->n - 1]);
}

nmo_status nmo_eng_calibrate(nmo_eng_tolset *ts, const nmo_camp_cfg *cfg, const char *const *journals, int nj,
                             nmo_err *err)
{
    memset(ts, 0, sizeof *ts);
    calib_ctx c = {.cfg = cfg};
    nmo_status st = stream(journals, nj, calib_line, &c, err);
    if (st == NMO_OK) {
        ts->t = calloc((size_t)c.nh + 1, sizeof *ts->t);
        if (!ts->t) st = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; st == NMO_OK && i < c.nh; i++) {
        struct hist *a = &c.h[i];
        if (a->kind != 0) continue;
        struct hist *r = hist_get(&c, a->op, a->dt, a->shape, a->k, 1);
        a = &c.h[i]; /* hist_get may have moved the array */
        nmo_eng_tol *t = &ts->t[ts->n++];
        t->op = a->op, t->dt = a->dt, t->shape = a->shape, t->k = a->k;
        t->atol = hist_quantile(a, cfg->quantile);
        t->rtol = r ? hist_quantile(r, cfg->quantile) : NAN;
        if (isnan(t->rtol)) t->rtol = 0;
        t->elements = a->total;
    }
    for (int i = 0; i < c.nh; i++) free(c.h[i].bin), free(c.h[i].cnt);
    free(c.h);
    return st;
}

/* ---------------------------------------------------------------- aggregation */

typedef struct {
    char id[48], op[64], kind[12], base[64], mutop[16], file[256], func[64], status[16];
    int line, col;
    char desc[256], cc_error[256];
    char *diff;
    char probe[16], probe_detail[160];
    long runs[5]; /* ok crash timeout error nondet */
    int eff[2];   /* main, shifted */
    int64_t excess; /* max over main runs of (ulps from the reference) - (the correct variants' max there) */
    int have_excess;
    int det[2][NMO_CK_COUNT];
    char det_input[NMO_CK_COUNT][96]; /* smallest input key where the check detects (main) */
    long nrec;
    /* issue 17, main inputs per dtype: effective; its base judged under a declared
     * geometry; numoracle detects it under `any` [0] and under the geometry plans [1] */
    int eff_dt[NMO_CAMP_MAX_DT], geo_dt[NMO_CAMP_MAX_DT], gdet[2][NMO_CAMP_MAX_DT];
} rmut;

typedef struct {
    uint64_t key;  /* hash of op|dt|shape|fam|seed|base */
    uint64_t ikey; /* hash of op|dt|shape|fam|seed */
    int64_t ulp;
    int mut;       /* index into muts */
    int cls;       /* 0 main, 1 shifted */
    int dt, eff;
    char v[NMO_CK_COUNT + 1];
    char vg;       /* numoracle under the base's declared geometry: P/F/I, E (not applied), 0 none */
    char input[96];
} mrun;

typedef struct {
    uint64_t key;
    char v[NMO_CK_COUNT + 1];
    char vg;
} brun;

/* The journal's geometry verdict of a run: "vg", 'E' for "gerr", 0 when none declared. */
static char geo_verdict(const cJSON *rec)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(rec, "vg");
    if (cJSON_IsString(g) && g->valuestring[0]) return g->valuestring[0];
    return cJSON_GetObjectItemCaseSensitive(rec, "gerr") ? 'E' : 0;
}

/* input -> max distance (ulps) of any correct variant from the reference */
typedef struct {
    uint64_t key;
    int64_t v;
} imax_e;

typedef struct {
    long runs[2], err[2];
    long fa[2][NMO_CK_COUNT];
    long na[2][NMO_CK_COUNT];
    long inc[2];
} role_agg;

typedef struct {
    const nmo_camp_cfg *cfg;
    rmut *m;
    int nm, capm;
    nmo_hset mids;
    mrun *mr;
    long nmr, capmr;
    brun *br; /* open addressing table */
    size_t capbr, nbr;
    imax_e *im;
    size_t capim, nim;
    role_agg role[NMO_CAMP_MAX_OPS][2]; /* [op][correct, bp] */
    /* correct and bp runs under their declared geometry [op][dt]: judged, FAIL,
     * INCONCLUSIVE, FAIL under `any` among those, not applied */
    long geo_runs[NMO_CAMP_MAX_OPS][NMO_CAMP_MAX_DT][5];
    double teq[NMO_CAMP_MAX_OPS][NMO_CAMP_MAX_DT][NMO_FAM_COUNT];
    long teq_runs[NMO_CAMP_MAX_OPS][NMO_CAMP_MAX_DT][NMO_FAM_COUNT];
    double teq_def[NMO_CAMP_MAX_OPS][NMO_CAMP_MAX_DT][NMO_FAM_COUNT]; /* default variant only */
    long calib_runs;
    int headers;
    char notes[4096];
    char header_hash[32];
    int hash_mismatch;
} agg_ctx;

static int find_mut(agg_ctx *a, const char *id)
{
    for (int i = 0; i < a->nm; i++)
        if (strcmp(a->m[i].id, id) == 0) return i;
    return -1;
}

static int brun_put(agg_ctx *a, uint64_t key, const char *v, char vg)
{
    if ((a->nbr + 1) * 2 > a->capbr) {
        size_t nc = a->capbr ? a->capbr * 2 : 4096;
        brun *nb = calloc(nc, sizeof *nb);
        if (!nb) return -1;
        for (size_t i = 0; i < a->capbr; i++)
            if (a->br[i].key)
                for (size_t j = a->br[i].key & (nc - 1);; j = (j + 1) & (nc - 1))
                    if (!nb[j].key) {
                        nb[j] = a->br[i];
                        break;
                    }
        free(a->br);
        a->br = nb;
        a->capbr = nc;
    }
    for (size_t i = key & (a->capbr - 1);; i = (i + 1) & (a->capbr - 1)) {
        if (a->br[i].key == key || !a->br[i].key) {
            if (!a->br[i].key) a->nbr++;
            a->br[i].key = key;
            a->br[i].vg = vg;
            snprintf(a->br[i].v, sizeof a->br[i].v, "%s", v);
            return 0;
        }
    }
}

static int imax_put(agg_ctx *a, uint64_t key, int64_t v)
{
    if ((a->nim + 1) * 2 > a->capim) {
        size_t nc = a->capim ? a->capim * 2 : 4096;
        imax_e *nb = calloc(nc, sizeof *nb);
        if (!nb) return -1;
        for (size_t i = 0; i < a->capim; i++)
            if (a->im[i].key)
                for (size_t j = a->im[i].key & (nc - 1);; j = (j + 1) & (nc - 1))
                    if (!nb[j].key) {
                        nb[j] = a->im[i];
                        break;
                    }
        free(a->im);
        a->im = nb;
        a->capim = nc;
    }
    for (size_t i = key & (a->capim - 1);; i = (i + 1) & (a->capim - 1)) {
        if (!a->im[i].key) {
            a->im[i].key = key;
            a->im[i].v = v;
            a->nim++;
            return 0;
        }
        if (a->im[i].key == key) {
            if (v > a->im[i].v) a->im[i].v = v;
            return 0;
        }
    }
}

static const imax_e *imax_get(const agg_ctx *a, uint64_t key)
{
    if (!a->capim) return NULL;
    for (size_t i = key & (a->capim - 1);; i = (i + 1) & (a->capim - 1)) {
        if (a->im[i].key == key) return &a->im[i];
        if (!a->im[i].key) return NULL;
    }
}

static const brun *brun_get(const agg_ctx *a, uint64_t key)
{
    if (!a->capbr) return NULL;
    for (size_t i = key & (a->capbr - 1);; i = (i + 1) & (a->capbr - 1)) {
        if (a->br[i].key == key) return &a->br[i];
        if (!a->br[i].key) return NULL;
    }
}

static int agg_line(void *vc, cJSON *rec, const char *line)
{
    (void)line;
    agg_ctx *a = vc;
    const char *type = jstr(rec, "type");
    if (strcmp(type, "header") == 0) {
        const char *h = jstr(rec, "config_hash");
        if (a->headers && strcmp(h, a->header_hash) != 0) a->hash_mismatch = 1;
        snprintf(a->header_hash, sizeof a->header_hash, "%s", h);
        a->headers++;
        return 0;
    }
    if (strcmp(type, "mutant") == 0) {
        if (op_index(a->cfg, jstr(rec, "op")) < 0) return 0;
        if (a->nm == a->capm) {
            int nc = a->capm ? 2 * a->capm : 256;
            rmut *nm = realloc(a->m, (size_t)nc * sizeof *nm);
            if (!nm) return -1;
            a->m = nm;
            a->capm = nc;
        }
        rmut *m = &a->m[a->nm++];
        memset(m, 0, sizeof *m);
        snprintf(m->id, sizeof m->id, "%s", jstr(rec, "id"));
        snprintf(m->op, sizeof m->op, "%s", jstr(rec, "op"));
        snprintf(m->kind, sizeof m->kind, "%s", jstr(rec, "kind"));
        snprintf(m->base, sizeof m->base, "%s", jstr(rec, "base"));
        snprintf(m->mutop, sizeof m->mutop, "%s", jstr(rec, "mutop"));
        snprintf(m->file, sizeof m->file, "%s", jstr(rec, "file"));
        snprintf(m->func, sizeof m->func, "%s", jstr(rec, "func"));
        snprintf(m->desc, sizeof m->desc, "%s", jstr(rec, "desc"));
        snprintf(m->status, sizeof m->status, "%s", jstr(rec, "status"));
        snprintf(m->cc_error, sizeof m->cc_error, "%s", jstr(rec, "cc_error"));
        m->line = (int)jnum(rec, "line");
        m->col = (int)jnum(rec, "col");
        const char *d = jstr(rec, "diff");
        m->diff = *d ? strdup(d) : NULL;
        return 0;
    }
    if (strcmp(type, "note") == 0) {
        size_t l = strlen(a->notes);
        snprintf(a->notes + l, sizeof a->notes - l, "%s%s", l ? "\n" : "", jstr(rec, "text"));
        return 0;
    }
    if (strcmp(type, "probe") == 0) {
        const char *mid = jstr(rec, "mutant");
        int i = find_mut(a, mid);
        if (i < 0) {
            /* probe before the mutant record (merged journals): keep it for later */
            return 0;
        }
        snprintf(a->m[i].probe, sizeof a->m[i].probe, "%s", jstr(rec, "status"));
        snprintf(a->m[i].probe_detail, sizeof a->m[i].probe_detail, "%s", jstr(rec, "detail"));
        return 0;
    }
    if (strcmp(type, "run") != 0) return 0;
    const char *phase = jstr(rec, "phase");
    int op = op_index(a->cfg, jstr(rec, "op"));
    if (op < 0) return 0;
    if (strcmp(phase, "calib") == 0) {
        a->calib_runs++;
        return 0;
    }
    if (strcmp(phase, "eval") != 0) return 0;
    int dt = dt_index(a->cfg, jstr(rec, "dtype"));
    int fam = fam_of(jstr(rec, "family"));
    int cls = fam >= 0 ? fam_class(a->cfg, fam) : -1;
    if (dt < 0 || cls < 0) return 0;
    const char *role = jstr(rec, "role"), *status = jstr(rec, "status"), *v = jstr(rec, "v");
    char key[600];
    if (strcmp(status, "skipped") == 0) return 0; /* backend hip: the kernel does not run this case */
    if (strcmp(role, "correct") == 0 || strcmp(role, "bp") == 0) {
        int r = strcmp(role, "bp") == 0;
        role_agg *g = &a->role[op][r];
        if (strcmp(status, "ok") != 0) {
            g->err[cls]++;
            return 0;
        }
        g->runs[cls]++;
        for (int c = 0; c < NMO_CK_COUNT && v[c]; c++) {
            if (v[c] == 'F') g->fa[cls][c]++;
            if (v[c] == '-') g->na[cls][c]++;
        }
        if (v[0] == 'I') g->inc[cls]++;
        double t = jnum(rec, "teq");
        if (!(t <= a->teq[op][dt][fam])) a->teq[op][dt][fam] = t; /* NaN-safe max */
        a->teq_runs[op][dt][fam]++;
        if (!r && !(t <= a->teq_def[op][dt][fam])) a->teq_def[op][dt][fam] = t;
        snprintf(key, sizeof key, "%s|%s|%s|%s|%.0f", jstr(rec, "op"), jstr(rec, "dtype"), jstr(rec, "shape"),
                 jstr(rec, "family"), jnum(rec, "seed"));
        double u = jnum(rec, "ulp");
        if (imax_put(a, nmo_hkey(key), isnan(u) ? 0 : (int64_t)u)) return -1;
        snprintf(key, sizeof key, "%s|%s|%s|%s|%.0f|%s", jstr(rec, "op"), jstr(rec, "dtype"), jstr(rec, "shape"),
                 jstr(rec, "family"), jnum(rec, "seed"), jstr(rec, "cand"));
        char vg = geo_verdict(rec);
        long *gr = a->geo_runs[op][dt];
        if (vg == 'E') gr[4]++;
        else if (vg) gr[0]++, gr[1] += vg == 'F', gr[2] += vg == 'I', gr[3] += v[0] == 'F';
        return brun_put(a, nmo_hkey(key), v, vg);
    }
    /* mutant / null runs */
    int mi = find_mut(a, jstr(rec, "cand"));
    if (mi < 0) return 0;
    rmut *m = &a->m[mi];
    m->nrec++;
    static const char *const sts[5] = {"ok", "crash", "timeout", "error", "nondet"};
    int si = 3;
    for (int k = 0; k < 5; k++)
        if (strcmp(status, sts[k]) == 0) si = k;
    m->runs[si]++;
    if (si != 0) return 0;
    const cJSON *eff = cJSON_GetObjectItemCaseSensitive(rec, "eff");
    int is_eff = cJSON_IsNumber(eff) && eff->valuedouble != 0;
    if (is_eff) m->eff[cls] = 1;
    if (is_eff && cls == 0) m->eff_dt[dt] = 1;
    if (a->nmr == a->capmr) {
        long nc = a->capmr ? 2 * a->capmr : 4096;
        mrun *nr = realloc(a->mr, (size_t)nc * sizeof *nr);
        if (!nr) return -1;
        a->mr = nr;
        a->capmr = nc;
    }
    mrun *x = &a->mr[a->nmr++];
    memset(x, 0, sizeof *x);
    snprintf(key, sizeof key, "%s|%s|%s|%s|%.0f|%s", jstr(rec, "op"), jstr(rec, "dtype"), jstr(rec, "shape"),
             jstr(rec, "family"), jnum(rec, "seed"), jstr(rec, "base"));
    x->key = nmo_hkey(key);
    snprintf(key, sizeof key, "%s|%s|%s|%s|%.0f", jstr(rec, "op"), jstr(rec, "dtype"), jstr(rec, "shape"),
             jstr(rec, "family"), jnum(rec, "seed"));
    x->ikey = nmo_hkey(key);
    double u = jnum(rec, "ulp");
    x->ulp = isnan(u) ? 0 : (int64_t)u;
    x->mut = mi;
    x->cls = cls;
    x->dt = dt;
    x->eff = is_eff;
    x->vg = geo_verdict(rec);
    snprintf(x->v, sizeof x->v, "%s", v);
    snprintf(x->input, sizeof x->input, "%s %s %s seed %.0f", jstr(rec, "dtype"), jstr(rec, "shape"), jstr(rec, "family"),
             jnum(rec, "seed"));
    return 0;
}

/* ---------------------------------------------------------------- output helpers */

typedef struct {
    char *p;
    size_t n, cap;
} tbuf;

static void tb(tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb(tbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 65536;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) return;
        b->p = np;
        b->cap = nc;
    }
}

static void html_esc(tbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') tb(b, "&lt;");
        else if (*s == '>') tb(b, "&gt;");
        else if (*s == '&') tb(b, "&amp;");
        else if (*s == '"') tb(b, "&quot;");
        else tb(b, "%c", *s);
    }
}

static void md_esc(tbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') tb(b, "\\|");
        else if (*s == '\n') tb(b, " ");
        else tb(b, "%c", *s);
    }
}

static double pct(long a, long b) { return b ? 100.0 * (double)a / (double)b : 0; }

static int cmp_rmut(const void *x, const void *y) { return strcmp(((const rmut *)x)->id, ((const rmut *)y)->id); }

static const char *fmt_g(char *buf, size_t n, double x)
{
    if (isnan(x)) snprintf(buf, n, "-");
    else if (isinf(x)) snprintf(buf, n, "inf");
    else snprintf(buf, n, "%.3g", x);
    return buf;
}

/* ---------------------------------------------------------------- the report */

/* Presentation threshold of the deviation split (output ulps beyond the correct
 * variants' own largest deviation from the reference on the same input). */
#define GROSS_ULPS 8

typedef struct {
    long total, gen, hand, nul, stillborn, probe_killed[3], evaluated, eff_main, eff_shift, eff_any, equivalent,
        nondet_runs, nondet_mut, unrun;
    long det[2][NMO_CK_COUNT];
    long gross, gross_det[NMO_CK_COUNT]; /* effective and > GROSS_ULPS beyond every correct variant */
    long rlevel, rlevel_det[NMO_CK_COUNT]; /* effective but within GROSS_ULPS of the correct variants */
} summary_t;

/* Everything the report's writers read: the aggregated journal, the calibrated
 * tolerances and the counts derived from them (nmo_camp_report fills it in order). */
typedef struct {
    char name[64];
    long mutants, evaluated, eff_main, det[NMO_CK_COUNT];
} brk; /* one row of the per-operator / per-mutation-operator breakdowns */

typedef struct {
    const nmo_camp_cfg *cfg;
    agg_ctx *a;
    nmo_eng_tolset ts;
    long unjoined; /* mutant runs without their base's run on the same input */
    summary_t S;
    role_agg T[2]; /* totals over operators: correct, behaviour-preserving */
    brk byop[NMO_CAMP_MAX_OPS];
    brk bymop[NMO_MOP_COUNT + 2];
    int nbymop;
    int null_bad; /* a null-mutant control is effective or stillborn */
    long grun[NMO_CAMP_MAX_DT][3]; /* effective main mutant runs [dt]: total, detected any, geometry */
} report_t;

/* Local names the writers use, so each reads as the one function it was split from. */
#define REPORT_LOCALS(r)                                                                  \
    const nmo_camp_cfg *cfg = (r)->cfg;                                                   \
    agg_ctx *a = (r)->a;                                                                  \
    const summary_t S = (r)->S;                                                           \
    const role_agg *T = (r)->T;                                                           \
    const brk *byop = (r)->byop, *bymop = (r)->bymop;                                     \
    const int nbymop = (r)->nbymop;                                                       \
    const nmo_eng_tolset ts = (r)->ts;                                                    \
    const long E = S.eff_main;                                                            \
    (void)cfg, (void)a, (void)S, (void)T, (void)byop, (void)bymop, (void)nbymop, (void)ts, (void)E

/* Join the mutant runs with their base's run on the same input: detections per check and
 * class, the first main input numoracle detects on, the deviation beyond the correct
 * variants. */
static void report_join(report_t *r)
{
    agg_ctx *a = r->a;
    long unjoined = 0;
    for (long i = 0; i < a->nmr; i++) {
        mrun *x = &a->mr[i];
        const brun *b = brun_get(a, x->key);
        if (!b) {
            unjoined++;
            continue;
        }
        rmut *m = &a->m[x->mut];
        const imax_e *t = imax_get(a, x->ikey);
        if (t && x->cls == 0 && (!m->have_excess || x->ulp - t->v > m->excess)) {
            m->excess = x->ulp - t->v;
            m->have_excess = 1;
        }
        if (x->cls == 0 && x->eff) { /* numoracle under `any` and under the base's geometry */
            char mg = x->vg ? x->vg : x->v[0], bg = b->vg ? b->vg : b->v[0];
            if (b->vg) m->geo_dt[x->dt] = 1;
            int da = x->v[0] == 'F' && b->v[0] == 'P', dg = mg == 'F' && bg == 'P';
            m->gdet[0][x->dt] |= da, m->gdet[1][x->dt] |= dg;
            r->grun[x->dt][0]++, r->grun[x->dt][1] += da, r->grun[x->dt][2] += dg;
        }
        for (int c = 0; c < NMO_CK_COUNT && x->v[c] && b->v[c]; c++)
            if (x->v[c] == 'F' && b->v[c] == 'P') {
                m->det[x->cls][c] = 1;
                if (x->cls == 0 && (!m->det_input[c][0] || strcmp(x->input, m->det_input[c]) < 0))
                    snprintf(m->det_input[c], sizeof m->det_input[c], "%s", x->input);
            }
    }
    r->unjoined = unjoined;
}

/* The mutant counts: totals, per operator, per mutation operator (S, byop, bymop). */
static void report_summarize(report_t *r)
{
    const nmo_camp_cfg *cfg = r->cfg;
    agg_ctx *a = r->a;
    summary_t S;
    memset(&S, 0, sizeof S);
    brk *byop = r->byop, *bymop = r->bymop;
    int nbymop = 0;
    /* per op and per mutation operator breakdowns */
    for (int i = 0; i < cfg->nops; i++) snprintf(byop[i].name, sizeof byop[i].name, "%s", cfg->ops[i]->name);
    for (int i = 0; i < a->nm; i++) {
        rmut *m = &a->m[i];
        if (strcmp(m->kind, "null") == 0) {
            S.nul++;
            continue;
        }
        S.total++;
        if (strcmp(m->kind, "hand") == 0) S.hand++;
        else S.gen++;
        int oi = op_index(cfg, m->op);
        brk *bo = oi >= 0 ? &byop[oi] : NULL;
        int mi = -1;
        for (int k = 0; k < nbymop; k++)
            if (strcmp(bymop[k].name, m->mutop) == 0) mi = k;
        if (mi < 0 && nbymop < NMO_MOP_COUNT + 2) {
            mi = nbymop++;
            snprintf(bymop[mi].name, sizeof bymop[mi].name, "%s", m->mutop);
        }
        brk *bm = mi >= 0 ? &bymop[mi] : NULL;
        if (bo) bo->mutants++;
        if (bm) bm->mutants++;
        if (strcmp(m->status, "stillborn") == 0) {
            S.stillborn++;
            continue;
        }
        if (strcmp(m->probe, "crash") == 0) { S.probe_killed[0]++; continue; }
        if (strcmp(m->probe, "timeout") == 0) { S.probe_killed[1]++; continue; }
        if (strcmp(m->probe, "error") == 0) { S.probe_killed[2]++; continue; }
        if (m->nrec == 0) {
            S.unrun++;
            continue;
        }
        S.evaluated++;
        if (bo) bo->evaluated++;
        if (bm) bm->evaluated++;
        S.nondet_runs += m->runs[4];
        S.nondet_mut += m->runs[4] > 0;
        if (m->eff[0]) {
            S.eff_main++;
            if (bo) bo->eff_main++;
            if (bm) bm->eff_main++;
            for (int c = 0; c < NMO_CK_COUNT; c++)
                if (m->det[0][c]) {
                    S.det[0][c]++;
                    if (bo) bo->det[c]++;
                    if (bm) bm->det[c]++;
                }
        }
        if (m->eff[0]) {
            int gross = m->have_excess && m->excess > GROSS_ULPS;
            if (gross) S.gross++;
            else S.rlevel++;
            for (int c = 0; c < NMO_CK_COUNT; c++) {
                if (gross) S.gross_det[c] += m->det[0][c];
                else S.rlevel_det[c] += m->det[0][c];
            }
        }
        if (m->eff[1]) {
            S.eff_shift++;
            for (int c = 0; c < NMO_CK_COUNT; c++) S.det[1][c] += m->det[1][c];
        }
        if (m->eff[0] || m->eff[1]) S.eff_any++;
        else S.equivalent++;
    }
    r->S = S;
    r->nbymop = nbymop;
}

/* The run counts of the correct and behaviour-preserving roles, over operators. */
static void report_totals(report_t *r)
{
    const nmo_camp_cfg *cfg = r->cfg;
    agg_ctx *a = r->a;
    role_agg *T = r->T;
    for (int o = 0; o < cfg->nops; o++)
        for (int r = 0; r < 2; r++)
            for (int c2 = 0; c2 < 2; c2++) {
                T[r].runs[c2] += a->role[o][r].runs[c2];
                T[r].err[c2] += a->role[o][r].err[c2];
                T[r].inc[c2] += a->role[o][r].inc[c2];
                for (int c = 0; c < NMO_CK_COUNT; c++) {
                    T[r].fa[c2][c] += a->role[o][r].fa[c2][c];
                    T[r].na[c2][c] += a->role[o][r].na[c2][c];
                }
            }

}

/* report.json, the counts part (format, campaign, checks, mutants, detection, false
 * alarms, per operator and mutation operator, tolerances). */
static void report_json_counts(const report_t *r, cJSON *R)
{
    REPORT_LOCALS(r);
    const long unjoined = r->unjoined;
    cJSON_AddStringToObject(R, "format", "numoracle-campaign-report/1");
    cJSON *cp = cJSON_AddObjectToObject(R, "campaign");
    cJSON_AddStringToObject(cp, "name", cfg->name);
    cJSON_AddStringToObject(cp, "config_hash", cfg->config_hash);
    cJSON_AddStringToObject(cp, "backend", cfg->backend);
    cJSON_AddItemToObject(cp, "config", cJSON_Parse(cfg->config_text));
    if (a->hash_mismatch) cJSON_AddStringToObject(cp, "warning", "journals with different config hashes were merged");
    cJSON *cks = cJSON_AddArrayToObject(R, "checks");
    for (int c = 0; c < NMO_CK_COUNT; c++) {
        if (!cfg->check_on[c]) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", nmo_ck_name((nmo_ck)c));
        cJSON_AddStringToObject(o, "label", nmo_ck_label((nmo_ck)c));
        cJSON_AddStringToObject(o, "rule", nmo_ck_rule((nmo_ck)c));
        cJSON_AddItemToArray(cks, o);
    }
    cJSON *mu = cJSON_AddObjectToObject(R, "mutants");
    cJSON_AddNumberToObject(mu, "total", (double)S.total);
    cJSON_AddNumberToObject(mu, "generated", (double)S.gen);
    cJSON_AddNumberToObject(mu, "hand_written", (double)S.hand);
    cJSON_AddNumberToObject(mu, "stillborn", (double)S.stillborn);
    cJSON_AddNumberToObject(mu, "probe_crash", (double)S.probe_killed[0]);
    cJSON_AddNumberToObject(mu, "probe_timeout", (double)S.probe_killed[1]);
    cJSON_AddNumberToObject(mu, "probe_error", (double)S.probe_killed[2]);
    cJSON_AddNumberToObject(mu, "not_run", (double)S.unrun);
    cJSON_AddNumberToObject(mu, "evaluated", (double)S.evaluated);
    cJSON_AddNumberToObject(mu, "effective_main", (double)S.eff_main);
    cJSON_AddNumberToObject(mu, "effective_shifted", (double)S.eff_shift);
    cJSON_AddNumberToObject(mu, "effective_any", (double)S.eff_any);
    cJSON_AddNumberToObject(mu, "never_effective", (double)S.equivalent);
    cJSON_AddNumberToObject(mu, "mutants_with_nondeterministic_runs", (double)S.nondet_mut);
    cJSON_AddNumberToObject(mu, "nondeterministic_runs", (double)S.nondet_runs);
    cJSON_AddNumberToObject(mu, "mutant_runs_without_base_run", (double)unjoined);
    for (int cl = 0; cl < 2; cl++) {
        cJSON *d = cJSON_AddObjectToObject(R, cl ? "detection_shifted" : "detection_main");
        cJSON_AddNumberToObject(d, "effective", (double)(cl ? S.eff_shift : S.eff_main));
        cJSON *bc = cJSON_AddObjectToObject(d, "detected");
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) cJSON_AddNumberToObject(bc, nmo_ck_name((nmo_ck)c), (double)S.det[cl][c]);
    }
    {
        cJSON *d = cJSON_AddObjectToObject(R, "detection_main_by_deviation");
        cJSON_AddStringToObject(d, "definition",
                                "deviation of an effective mutant: the largest, over main inputs, of its distance from the "
                                "reference in output ulps minus the largest distance of any correct variant on that input; "
                                "gross: more than 8 ulps, rounding-level: at most 8");
        cJSON_AddNumberToObject(d, "threshold_ulps", GROSS_ULPS);
        cJSON *g = cJSON_AddObjectToObject(d, "gross");
        cJSON_AddNumberToObject(g, "effective", (double)S.gross);
        cJSON *gd = cJSON_AddObjectToObject(g, "detected");
        cJSON *r = cJSON_AddObjectToObject(d, "rounding_level");
        cJSON_AddNumberToObject(r, "effective", (double)S.rlevel);
        cJSON *rd = cJSON_AddObjectToObject(r, "detected");
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) {
                cJSON_AddNumberToObject(gd, nmo_ck_name((nmo_ck)c), (double)S.gross_det[c]);
                cJSON_AddNumberToObject(rd, nmo_ck_name((nmo_ck)c), (double)S.rlevel_det[c]);
            }
    }
    cJSON *fa = cJSON_AddObjectToObject(R, "false_alarms");
    for (int r = 0; r < 2; r++) {
        cJSON *g = cJSON_AddObjectToObject(fa, r ? "behaviour_preserving" : "correct");
        cJSON_AddNumberToObject(g, "runs_main", (double)T[r].runs[0]);
        cJSON_AddNumberToObject(g, "runs_shifted", (double)T[r].runs[1]);
        cJSON_AddNumberToObject(g, "errors", (double)(T[r].err[0] + T[r].err[1]));
        for (int c = 0; c < NMO_CK_COUNT; c++) {
            if (!cfg->check_on[c]) continue;
            cJSON *x = cJSON_AddObjectToObject(g, nmo_ck_name((nmo_ck)c));
            cJSON_AddNumberToObject(x, "main", (double)T[r].fa[0][c]);
            cJSON_AddNumberToObject(x, "shifted", (double)T[r].fa[1][c]);
            if (T[r].na[0][c] + T[r].na[1][c]) cJSON_AddNumberToObject(x, "not_applicable", (double)(T[r].na[0][c] + T[r].na[1][c]));
        }
    }
    cJSON *inc = cJSON_AddObjectToObject(R, "numoracle_inconclusive");
    for (int r = 0; r < 2; r++) {
        cJSON *g = cJSON_AddObjectToObject(inc, r ? "behaviour_preserving" : "correct");
        cJSON_AddNumberToObject(g, "main", (double)T[r].inc[0]);
        cJSON_AddNumberToObject(g, "shifted", (double)T[r].inc[1]);
    }
    cJSON *po = cJSON_AddArrayToObject(R, "per_operator");
    for (int o = 0; o < cfg->nops; o++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "op", byop[o].name);
        cJSON_AddNumberToObject(x, "mutants", (double)byop[o].mutants);
        cJSON_AddNumberToObject(x, "evaluated", (double)byop[o].evaluated);
        cJSON_AddNumberToObject(x, "effective_main", (double)byop[o].eff_main);
        cJSON *d = cJSON_AddObjectToObject(x, "detected_main");
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) cJSON_AddNumberToObject(d, nmo_ck_name((nmo_ck)c), (double)byop[o].det[c]);
        cJSON *f = cJSON_AddObjectToObject(x, "false_alarms");
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c])
                cJSON_AddNumberToObject(f, nmo_ck_name((nmo_ck)c),
                                        (double)(a->role[o][0].fa[0][c] + a->role[o][0].fa[1][c] + a->role[o][1].fa[0][c] +
                                                 a->role[o][1].fa[1][c]));
        cJSON_AddNumberToObject(x, "correct_runs", (double)(a->role[o][0].runs[0] + a->role[o][0].runs[1]));
        cJSON_AddNumberToObject(x, "bp_runs", (double)(a->role[o][1].runs[0] + a->role[o][1].runs[1]));
        cJSON_AddNumberToObject(x, "inconclusive_shifted", (double)(a->role[o][0].inc[1] + a->role[o][1].inc[1]));
        cJSON_AddItemToArray(po, x);
    }
    cJSON *pm = cJSON_AddArrayToObject(R, "per_mutation_operator");
    for (int k = 0; k < nbymop; k++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "mutop", bymop[k].name);
        cJSON_AddNumberToObject(x, "mutants", (double)bymop[k].mutants);
        cJSON_AddNumberToObject(x, "evaluated", (double)bymop[k].evaluated);
        cJSON_AddNumberToObject(x, "effective_main", (double)bymop[k].eff_main);
        cJSON *d = cJSON_AddObjectToObject(x, "detected_main");
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) cJSON_AddNumberToObject(d, nmo_ck_name((nmo_ck)c), (double)bymop[k].det[c]);
        cJSON_AddItemToArray(pm, x);
    }
    cJSON *tj = cJSON_AddArrayToObject(R, "min_equal_atol_rtol");
    for (int o = 0; o < cfg->nops; o++)
        for (int d = 0; d < cfg->ndt; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++) {
                if (!a->teq_runs[o][d][f]) continue;
                cJSON *x = cJSON_CreateObject();
                char nb[40];
                cJSON_AddStringToObject(x, "op", cfg->ops[o]->name);
                cJSON_AddStringToObject(x, "dtype", nmo_fmt_name(cfg->dt[d]));
                cJSON_AddStringToObject(x, "family", nmo_family_name(f));
                cJSON_AddNumberToObject(x, "correct_runs", (double)a->teq_runs[o][d][f]);
                nmo_eng_jnum(nb, sizeof nb, a->teq[o][d][f]);
                cJSON_AddItemToObject(x, "min_tol_all_correct_variants", isfinite(a->teq[o][d][f]) ? cJSON_CreateNumber(a->teq[o][d][f]) : cJSON_CreateString(nb));
                nmo_eng_jnum(nb, sizeof nb, a->teq_def[o][d][f]);
                cJSON_AddItemToObject(x, "min_tol_default_variant", isfinite(a->teq_def[o][d][f]) ? cJSON_CreateNumber(a->teq_def[o][d][f]) : cJSON_CreateString(nb));
                cJSON_AddItemToArray(tj, x);
            }
    cJSON *pj = cJSON_AddArrayToObject(R, "p999_tolerances");
    for (int i = 0; i < ts.n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "op", cfg->ops[ts.t[i].op]->name);
        cJSON_AddStringToObject(x, "dtype", nmo_fmt_name(cfg->dt[ts.t[i].dt]));
        cJSON_AddStringToObject(x, "shape", cfg->shapes[ts.t[i].op][ts.t[i].shape].text);
        cJSON_AddStringToObject(x, "output", cfg->ops[ts.t[i].op]->out[ts.t[i].k].name);
        cJSON_AddNumberToObject(x, "atol", ts.t[i].atol);
        cJSON_AddNumberToObject(x, "rtol", ts.t[i].rtol);
        cJSON_AddNumberToObject(x, "elements", (double)ts.t[i].elements);
        cJSON_AddItemToArray(pj, x);
    }
    cJSON_AddNumberToObject(R, "calibration_runs", (double)a->calib_runs);
}

/* ---------------------------------------------------------------- issue 17: geometry */

/* Per dtype (and per operator x dtype when op >= 0): effective main mutants, those whose
 * base declared a geometry, detected by numoracle under `any` and under the geometry plans. */
static void geo_counts(const report_t *r, int op, int dt, long c[4])
{
    const agg_ctx *a = r->a;
    c[0] = c[1] = c[2] = c[3] = 0;
    for (int i = 0; i < a->nm; i++) {
        const rmut *m = &a->m[i];
        if (strcmp(m->kind, "null") == 0 || !m->eff_dt[dt] || !m->eff[0]) continue;
        if (op >= 0 && op_index(r->cfg, m->op) != op) continue;
        c[0]++, c[1] += m->geo_dt[dt], c[2] += m->gdet[0][dt], c[3] += m->gdet[1][dt];
    }
}

/* Correct and behaviour-preserving runs judged under a geometry, over operators [5]. */
static void geo_run_totals(const report_t *r, int dt, long t[5])
{
    for (int k = 0; k < 5; k++) t[k] = 0;
    for (int o = 0; o < r->cfg->nops; o++)
        for (int k = 0; k < 5; k++) t[k] += r->a->geo_runs[o][dt][k];
}

#define GEO_DEF                                                                                                        \
    "numoracle under the reduction geometry each correct variant declares (laid over its plan), beside `any`: a "    \
    "mutant is judged under its base's geometry, and detected when it FAILs where its base PASSes on the same main "   \
    "input; a base that declares no geometry is judged under `any` in both columns"

static void report_json_geometry(const report_t *r, cJSON *R)
{
    const nmo_camp_cfg *cfg = r->cfg;
    if (!cfg->geometry) return;
    cJSON *d = cJSON_AddObjectToObject(R, "detection_main_geometry");
    cJSON_AddStringToObject(d, "definition", GEO_DEF);
    cJSON *bd = cJSON_AddArrayToObject(d, "by_dtype"), *po = cJSON_AddArrayToObject(d, "per_operator");
    for (int dt = 0; dt < cfg->ndt; dt++) {
        long c[4], t[5];
        geo_counts(r, -1, dt, c);
        geo_run_totals(r, dt, t);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "dtype", nmo_fmt_name(cfg->dt[dt]));
        cJSON_AddNumberToObject(x, "effective", (double)c[0]);
        cJSON_AddNumberToObject(x, "base_declares_geometry", (double)c[1]);
        cJSON_AddNumberToObject(x, "detected_any", (double)c[2]);
        cJSON_AddNumberToObject(x, "detected_geometry", (double)c[3]);
        cJSON_AddNumberToObject(x, "effective_runs", (double)r->grun[dt][0]);
        cJSON_AddNumberToObject(x, "detected_runs_any", (double)r->grun[dt][1]);
        cJSON_AddNumberToObject(x, "detected_runs_geometry", (double)r->grun[dt][2]);
        cJSON_AddNumberToObject(x, "correct_runs_under_geometry", (double)t[0]);
        cJSON_AddNumberToObject(x, "correct_fail_under_geometry", (double)t[1]);
        cJSON_AddNumberToObject(x, "correct_inconclusive_under_geometry", (double)t[2]);
        cJSON_AddNumberToObject(x, "correct_fail_under_any_same_runs", (double)t[3]);
        cJSON_AddNumberToObject(x, "geometry_not_applied", (double)t[4]);
        cJSON_AddItemToArray(bd, x);
        for (int o = 0; o < cfg->nops; o++) {
            geo_counts(r, o, dt, c);
            const long *g = r->a->geo_runs[o][dt];
            cJSON *y = cJSON_CreateObject();
            cJSON_AddStringToObject(y, "op", cfg->ops[o]->name);
            cJSON_AddStringToObject(y, "dtype", nmo_fmt_name(cfg->dt[dt]));
            cJSON_AddNumberToObject(y, "effective", (double)c[0]);
            cJSON_AddNumberToObject(y, "base_declares_geometry", (double)c[1]);
            cJSON_AddNumberToObject(y, "detected_any", (double)c[2]);
            cJSON_AddNumberToObject(y, "detected_geometry", (double)c[3]);
            cJSON_AddNumberToObject(y, "correct_runs_under_geometry", (double)g[0]);
            cJSON_AddNumberToObject(y, "correct_fail_under_geometry", (double)g[1]);
            cJSON_AddNumberToObject(y, "correct_inconclusive_under_geometry", (double)g[2]);
            cJSON_AddItemToArray(po, y);
        }
    }
}

/* mutant_list[i].numoracle_main_by_dtype: {dtype: {any, geometry}} where it is effective */
static void report_json_mutant_geometry(const report_t *r, const rmut *m, cJSON *x)
{
    if (!r->cfg->geometry || !m->eff[0]) return;
    cJSON *o = cJSON_AddObjectToObject(x, "numoracle_main_by_dtype");
    for (int dt = 0; dt < r->cfg->ndt; dt++) {
        if (!m->eff_dt[dt]) continue;
        cJSON *y = cJSON_AddObjectToObject(o, nmo_fmt_name(r->cfg->dt[dt]));
        cJSON_AddBoolToObject(y, "any", m->gdet[0][dt]);
        cJSON_AddBoolToObject(y, "geometry", m->gdet[1][dt]);
    }
}

static void report_markdown_geometry(const report_t *r, tbuf *md)
{
    const nmo_camp_cfg *cfg = r->cfg;
    const agg_ctx *a = r->a;
    if (!cfg->geometry) return;
    tb(md, "\n## numoracle under the declared reduction geometry\n\n%s. Mutant counts: effective mutants on main "
            "inputs; run counts: correct and behaviour-preserving runs, main and shifted inputs.\n\n", GEO_DEF);
    tb(md, "| dtype | effective | base declares a geometry | detected, any | detected, geometry plans | correct+bp runs "
            "under a geometry | FAIL | INCONCLUSIVE | not applied |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int dt = 0; dt < cfg->ndt; dt++) {
        long c[4], t[5];
        geo_counts(r, -1, dt, c);
        geo_run_totals(r, dt, t);
        tb(md, "| %s | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %ld |\n", nmo_fmt_name(cfg->dt[dt]), c[0], c[1], c[2], c[3],
           t[0], t[1], t[2], t[4]);
    }
    tb(md, "\nPer (mutant, input) run, effective mutants on main inputs:");
    for (int dt = 0; dt < cfg->ndt; dt++)
        tb(md, " %s %ld (any) / %ld (geometry) of %ld;", nmo_fmt_name(cfg->dt[dt]), r->grun[dt][1], r->grun[dt][2],
           r->grun[dt][0]);
    tb(md, "\n\n| operator | dtype | effective | detected, any | detected, geometry plans | correct+bp runs under a "
            "geometry | FAIL |\n|---|---|---|---|---|---|---|\n");
    for (int o = 0; o < cfg->nops; o++)
        for (int dt = 0; dt < cfg->ndt; dt++) {
            long c[4];
            geo_counts(r, o, dt, c);
            tb(md, "| %s | %s | %ld | %ld | %ld | %ld | %ld |\n", cfg->ops[o]->name, nmo_fmt_name(cfg->dt[dt]), c[0], c[2], c[3],
               a->geo_runs[o][dt][0], a->geo_runs[o][dt][1]);
        }
    tb(md, "\nMutants whose verdict differs between `any` and the geometry plans:\n\n");
    int nd = 0;
    for (int i = 0; i < a->nm; i++) {
        const rmut *m = &a->m[i];
        for (int dt = 0; dt < cfg->ndt; dt++)
            if (m->eff_dt[dt] && m->gdet[0][dt] != m->gdet[1][dt]) {
                tb(md, "- `%s` %s: detected only under %s\n", m->id, nmo_fmt_name(cfg->dt[dt]), m->gdet[1][dt] ? "the geometry" : "`any`");
                nd++;
            }
    }
    if (!nd) tb(md, "None.\n");
}

static void report_html_geometry(const report_t *r, tbuf *h)
{
    const nmo_camp_cfg *cfg = r->cfg;
    if (!cfg->geometry) return;
    tb(h, "<h2>numoracle under the declared reduction geometry</h2>\n<p>");
    html_esc(h, GEO_DEF);
    tb(h, ". Mutants: effective on main inputs; runs: correct and behaviour-preserving, main and shifted inputs.</p>\n<table><tr><th>operator</th><th>dtype</th><th>effective</th><th>detected, any</th><th>detected, geometry "
           "plans</th><th>correct+bp runs under a geometry</th><th>FAIL</th></tr>\n");
    for (int o = -1; o < cfg->nops; o++)
        for (int dt = 0; dt < cfg->ndt; dt++) {
            long c[4], t[5];
            geo_counts(r, o, dt, c);
            if (o < 0) geo_run_totals(r, dt, t);
            else
                for (int k = 0; k < 5; k++) t[k] = r->a->geo_runs[o][dt][k];
            tb(h, "<tr><td>%s</td><td>%s</td><td>%ld</td><td>%ld</td><td>%ld</td><td>%ld</td><td class=\"%s\">%ld</td></tr>\n",
               o < 0 ? "all" : cfg->ops[o]->name, nmo_fmt_name(cfg->dt[dt]), c[0], c[2], c[3], t[0], t[1] ? "bad" : "good", t[1]);
        }
    tb(h, "</table>\n");
}

/* report.json, the lists: null controls, notes, every mutant. */
static void report_json_lists(report_t *r, cJSON *R)
{
    REPORT_LOCALS(r);
    int null_bad = 0;
    cJSON *nc = cJSON_AddArrayToObject(R, "null_controls");
    for (int i = 0; i < a->nm; i++) {
        rmut *m = &a->m[i];
        if (strcmp(m->kind, "null") != 0) continue;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "op", m->op);
        cJSON_AddNumberToObject(x, "runs", (double)m->nrec);
        cJSON_AddBoolToObject(x, "effective", m->eff[0] || m->eff[1]);
        cJSON_AddStringToObject(x, "status", m->status);
        null_bad += m->eff[0] || m->eff[1] || strcmp(m->status, "stillborn") == 0;
        cJSON_AddItemToArray(nc, x);
    }
    cJSON *nt = cJSON_AddArrayToObject(R, "notes");
    {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", a->notes);
        char *save = NULL;
        for (char *t = strtok_r(tmp, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
            cJSON_AddItemToArray(nt, cJSON_CreateString(t));
    }
    cJSON *ml = cJSON_AddArrayToObject(R, "mutant_list");
    for (int i = 0; i < a->nm; i++) {
        rmut *m = &a->m[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "id", m->id);
        cJSON_AddStringToObject(x, "op", m->op);
        cJSON_AddStringToObject(x, "kind", m->kind);
        cJSON_AddStringToObject(x, "base", m->base);
        cJSON_AddStringToObject(x, "mutop", m->mutop);
        char loc[400];
        if (m->line) snprintf(loc, sizeof loc, "%s:%d:%d", m->file, m->line, m->col);
        else snprintf(loc, sizeof loc, "%s", m->file);
        cJSON_AddStringToObject(x, "location", loc);
        cJSON_AddStringToObject(x, "function", m->func);
        cJSON_AddStringToObject(x, "desc", m->desc);
        const char *state = strcmp(m->status, "stillborn") == 0 ? "stillborn"
                            : (m->probe[0] && strcmp(m->probe, "ok") && strcmp(m->probe, "nondet")) ? m->probe
                            : m->nrec == 0 ? "not_run"
                            : m->eff[0] ? "effective_main" : m->eff[1] ? "effective_shifted_only" : "never_effective";
        cJSON_AddStringToObject(x, "state", state);
        if (m->eff[0] && m->have_excess) cJSON_AddNumberToObject(x, "deviation_ulps_main", (double)m->excess);
        if (m->cc_error[0]) cJSON_AddStringToObject(x, "cc_error", m->cc_error);
        if (m->probe[0]) cJSON_AddStringToObject(x, "probe", m->probe);
        if (m->probe_detail[0] && strcmp(m->probe, "ok")) cJSON_AddStringToObject(x, "probe_detail", m->probe_detail);
        cJSON *runs = cJSON_AddObjectToObject(x, "runs");
        static const char *const sts[5] = {"ok", "crash", "timeout", "error", "nondet"};
        for (int k = 0; k < 5; k++)
            if (m->runs[k]) cJSON_AddNumberToObject(runs, sts[k], (double)m->runs[k]);
        cJSON *dm = cJSON_AddArrayToObject(x, "detected_main_by");
        cJSON *ds = cJSON_AddArrayToObject(x, "detected_shifted_by");
        for (int c = 0; c < NMO_CK_COUNT; c++) {
            if (!cfg->check_on[c]) continue;
            if (m->det[0][c]) cJSON_AddItemToArray(dm, cJSON_CreateString(nmo_ck_name((nmo_ck)c)));
            if (m->det[1][c]) cJSON_AddItemToArray(ds, cJSON_CreateString(nmo_ck_name((nmo_ck)c)));
        }
        if (m->det_input[0][0]) cJSON_AddStringToObject(x, "numoracle_detects_on", m->det_input[0]);
        report_json_mutant_geometry(r, m, x);
        if (m->diff) cJSON_AddStringToObject(x, "diff", m->diff);
        cJSON_AddItemToArray(ml, x);
    }
    r->null_bad = null_bad;
}

/* report.md */
static void report_markdown(const report_t *r, tbuf *md)
{
    REPORT_LOCALS(r);
    tb(md, "# numoracle campaign: %s\n\n", cfg->name);
    tb(md, "Backend `%s`, config hash `%s`. Operators:", cfg->backend, cfg->config_hash);
    for (int o = 0; o < cfg->nops; o++) tb(md, " %s", cfg->ops[o]->name);
    tb(md, ". Dtypes:");
    for (int d = 0; d < cfg->ndt; d++) tb(md, " %s", nmo_fmt_name(cfg->dt[d]));
    tb(md, ". Main families:");
    for (int f = 0; f < cfg->nmain; f++) tb(md, " %s", nmo_family_name(cfg->fam_main[f]));
    tb(md, "; shifted:");
    for (int f = 0; f < cfg->nshift; f++) tb(md, " %s", nmo_family_name(cfg->fam_shift[f]));
    tb(md, ".\n\n");
    tb(md, "Mutants: %ld (%ld generated, %ld hand-written); %ld stillborn; %ld crashed, %ld timed out, %ld errored on "
            "the probe input (trivially caught by any harness, not evaluated further); %ld evaluated; **%ld effective on "
            "main inputs**, %ld on shifted inputs, %ld never effective (equivalent on every input tried).",
       S.total, S.gen, S.hand, S.stillborn, S.probe_killed[0], S.probe_killed[1], S.probe_killed[2], S.evaluated, S.eff_main,
       S.eff_shift, S.equivalent);
    if (S.nondet_mut) tb(md, " %ld mutants had %ld nondeterministic runs (excluded from verdicts).", S.nondet_mut, S.nondet_runs);
    tb(md, "\n\n## Detection and false alarms\n\n");
    tb(md, "A check detects a mutant when it FAILs the mutant and PASSes its correct base on the same input. False "
            "alarms: FAIL on a correct run (the default variant) or a behaviour-preserving run (the other correct "
            "variants).\n\n");
    tb(md, "| check | detected (main) | detected (shifted) | false alarms, correct runs (main / shifted) | false alarms, "
            "behaviour-preserving runs (main / shifted) |\n|---|---|---|---|---|\n");
    for (int c = 0; c < NMO_CK_COUNT; c++) {
        if (!cfg->check_on[c]) continue;
        tb(md, "| %s | %ld / %ld (%.1f%%) | %ld / %ld | %ld / %ld | %ld / %ld |\n", nmo_ck_label((nmo_ck)c), S.det[0][c], E,
           pct(S.det[0][c], E), S.det[1][c], S.eff_shift, T[0].fa[0][c], T[0].fa[1][c], T[1].fa[0][c], T[1].fa[1][c]);
    }
    tb(md, "\nBy deviation (largest distance from the reference, in output ulps, beyond the largest distance of any "
            "correct variant on the same main input): %ld effective mutants deviate by more than %d ulps (gross), %ld by at "
            "most %d (rounding-level: indistinguishable from legitimate rounding without knowing the plan).\n\n"
            "| check | gross: detected | rounding-level: detected |\n|---|---|---|\n",
       S.gross, GROSS_ULPS, S.rlevel, GROSS_ULPS);
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c])
            tb(md, "| %s | %ld / %ld (%.1f%%) | %ld / %ld |\n", nmo_ck_label((nmo_ck)c), S.gross_det[c], S.gross,
               pct(S.gross_det[c], S.gross), S.rlevel_det[c], S.rlevel);
    tb(md, "\nRuns: %ld correct (%ld main, %ld shifted), %ld behaviour-preserving (%ld main, %ld shifted); %ld calibration "
            "runs (not counted above).\n\n",
       T[0].runs[0] + T[0].runs[1], T[0].runs[0], T[0].runs[1], T[1].runs[0] + T[1].runs[1], T[1].runs[0], T[1].runs[1],
       a->calib_runs);
    tb(md, "numoracle INCONCLUSIVE (never counted as a pass): correct runs %ld main / %ld shifted; behaviour-preserving "
            "runs %ld main / %ld shifted.\n\n",
       T[0].inc[0], T[0].inc[1], T[1].inc[0], T[1].inc[1]);
    tb(md, "## Per operator (main inputs)\n\n| operator | mutants | evaluated | effective |");
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c]) tb(md, " %s |", nmo_ck_name((nmo_ck)c));
    tb(md, " correct+bp runs | false alarms (numoracle) | inconclusive (shifted) |\n|---|---|---|---|");
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c]) tb(md, "---|");
    tb(md, "---|---|---|\n");
    for (int o = 0; o < cfg->nops; o++) {
        tb(md, "| %s | %ld | %ld | %ld |", byop[o].name, byop[o].mutants, byop[o].evaluated, byop[o].eff_main);
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) tb(md, " %ld |", byop[o].det[c]);
        long runs = a->role[o][0].runs[0] + a->role[o][0].runs[1] + a->role[o][1].runs[0] + a->role[o][1].runs[1];
        long fan = a->role[o][0].fa[0][0] + a->role[o][0].fa[1][0] + a->role[o][1].fa[0][0] + a->role[o][1].fa[1][0];
        tb(md, " %ld | %ld | %ld |\n", runs, fan, a->role[o][0].inc[1] + a->role[o][1].inc[1]);
    }
    tb(md, "\n## Per mutation operator (main inputs)\n\n| mutation operator | mutants | evaluated | effective |");
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c]) tb(md, " %s |", nmo_ck_name((nmo_ck)c));
    tb(md, "\n|---|---|---|---|");
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c]) tb(md, "---|");
    tb(md, "\n");
    for (int k = 0; k < nbymop; k++) {
        tb(md, "| %s | %ld | %ld | %ld |", bymop[k].name, bymop[k].mutants, bymop[k].evaluated, bymop[k].eff_main);
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) tb(md, " %ld |", bymop[k].det[c]);
        tb(md, "\n");
    }
    tb(md, "\n## Smallest equal atol = rtol that passes every correct run\n\nAgainst the reference (%s), over the "
            "evaluation runs of every correct variant (and of the default variant alone).\n\n"
            "| operator | dtype | family | runs of correct variants | all correct variants | default variant |\n|---|---|---|---|---|---|\n",
       cfg->ref_fp64 ? "binary64 enclosure midpoint rounded to out" : "plan enclosure midpoint rounded to out");
    for (int o = 0; o < cfg->nops; o++)
        for (int d = 0; d < cfg->ndt; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++) {
                if (!a->teq_runs[o][d][f]) continue;
                char x1[32], x2[32];
                tb(md, "| %s | %s | %s | %ld | %s | %s |\n", cfg->ops[o]->name, nmo_fmt_name(cfg->dt[d]), nmo_family_name(f),
                   a->teq_runs[o][d][f], fmt_g(x1, sizeof x1, a->teq[o][d][f]), fmt_g(x2, sizeof x2, a->teq_def[o][d][f]));
            }
    if (ts.n) {
        tb(md, "\n## Calibrated p99.9 tolerances (%ld calibration runs)\n\n| operator | dtype | shape | output | atol | rtol | "
                "elements |\n|---|---|---|---|---|---|---|\n",
           a->calib_runs);
        for (int i = 0; i < ts.n; i++) {
            char x1[32], x2[32];
            tb(md, "| %s | %s | %s | %s | %s | %s | %lld |\n", cfg->ops[ts.t[i].op]->name, nmo_fmt_name(cfg->dt[ts.t[i].dt]),
               cfg->shapes[ts.t[i].op][ts.t[i].shape].text, cfg->ops[ts.t[i].op]->out[ts.t[i].k].name,
               fmt_g(x1, sizeof x1, ts.t[i].atol), fmt_g(x2, sizeof x2, ts.t[i].rtol), ts.t[i].elements);
        }
    }
    tb(md, "\n## Controls\n\n");
    for (int i = 0; i < a->nm; i++) {
        rmut *m = &a->m[i];
        if (strcmp(m->kind, "null") != 0) continue;
        tb(md, "- null mutant of %s (unmutated source compiled as a mutant): %s over %ld runs\n", m->op,
           strcmp(m->status, "stillborn") == 0 ? "STILLBORN (compiler setup broken)"
           : (m->eff[0] || m->eff[1])          ? "EFFECTIVE — the mutant build does not reproduce the library build"
                                               : "never effective (bit-identical to the library's candidate)",
           m->nrec);
    }
    if (a->notes[0]) {
        tb(md, "\n## Notes\n\n");
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", a->notes);
        char *save = NULL;
        for (char *t = strtok_r(tmp, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) tb(md, "- %s\n", t);
    }
    tb(md, "\n## Effective mutants numoracle missed (main inputs)\n\n");
    int missed = 0;
    for (int i = 0; i < a->nm; i++) {
        rmut *m = &a->m[i];
        if (strcmp(m->kind, "null") == 0 || !m->eff[0] || m->det[0][0]) continue;
        missed++;
        tb(md, "- `%s` (%s, %s) %s:%d `%s`: ", m->id, m->op, m->mutop, m->file, m->line, m->func);
        md_esc(md, m->desc);
        if (m->have_excess) tb(md, "; deviation %lld ulps", (long long)m->excess);
        tb(md, "; caught by:");
        int any = 0;
        for (int c = 1; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c] && m->det[0][c]) tb(md, " %s", nmo_ck_name((nmo_ck)c)), any = 1;
        tb(md, "%s\n", any ? "" : " none");
    }
    if (!missed) tb(md, "None.\n");
    tb(md, "\nThe full mutant list with diffs is in report.json (`mutant_list`) and report.html.\n");

}

/* report.html: the head and the summary cards. */
static void report_html_head(const report_t *r, tbuf *h)
{
    REPORT_LOCALS(r);
    tb(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>numoracle campaign: ");
    html_esc(h, cfg->name);
    tb(h, "</title>\n<style>\nbody{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;"
           "max-width:1180px;color:#1d2330;padding:0 16px}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
           "border-bottom:1px solid #dde2ea;padding-bottom:4px}.sub{color:#5a6578}.cards{display:flex;gap:12px;flex-wrap:wrap;"
           "margin:16px 0}.card{border:1px solid #dde2ea;border-radius:8px;padding:10px 14px;min-width:150px}.card b{display:block;"
           "font-size:22px}.card span{color:#5a6578;font-size:12px}table{border-collapse:collapse;margin:8px 0;font-size:13px}"
           "td,th{border:1px solid #dde2ea;padding:4px 8px;text-align:right}th{background:#f3f5f9}td:first-child,th:first-child"
           "{text-align:left}.good{color:#0a7d32;font-weight:600}.bad{color:#b3261e;font-weight:600}details{margin:2px 0}"
           "pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}code{font-size:12px}.legend span{display:inline-block;"
           "width:10px;height:10px;margin:0 4px 0 12px;border-radius:2px}\n</style></head><body>\n");
    tb(h, "<h1>numoracle campaign: ");
    html_esc(h, cfg->name);
    tb(h, "</h1><div class=\"sub\">backend %s &middot; config %s &middot; operators:", cfg->backend, cfg->config_hash);
    for (int o = 0; o < cfg->nops; o++) tb(h, " %s", cfg->ops[o]->name);
    tb(h, " &middot; dtypes:");
    for (int d = 0; d < cfg->ndt; d++) tb(h, " %s", nmo_fmt_name(cfg->dt[d]));
    tb(h, "</div>\n<div class=\"cards\">");
    tb(h, "<div class=\"card\"><b>%ld / %ld</b><span>effective mutants (main) numoracle detects (%.1f%%)</span></div>",
       S.det[0][0], E, pct(S.det[0][0], E));
    long nfa = T[0].fa[0][0] + T[0].fa[1][0] + T[1].fa[0][0] + T[1].fa[1][0];
    tb(h, "<div class=\"card\"><b class=\"%s\">%ld</b><span>numoracle false alarms over %ld correct and %ld "
           "behaviour-preserving runs</span></div>",
       nfa ? "bad" : "good", nfa, T[0].runs[0] + T[0].runs[1], T[1].runs[0] + T[1].runs[1]);
    long best = 0, worst = -1;
    for (int c = 1; c < NMO_CK_COUNT; c++) {
        if (!cfg->check_on[c]) continue;
        if (S.det[0][c] > best) best = S.det[0][c];
        if (worst < 0 || S.det[0][c] < worst) worst = S.det[0][c];
    }
    tb(h, "<div class=\"card\"><b>%ld&ndash;%ld</b><span>effective mutants (main) the baselines detect</span></div>",
       worst < 0 ? 0 : worst, best);
    tb(h, "<div class=\"card\"><b>%ld</b><span>numoracle INCONCLUSIVE correct/bp runs on shifted inputs</span></div>",
       T[0].inc[1] + T[1].inc[1]);
    tb(h, "</div>\n");

}

/* report.html: the detection and false-alarm charts (inline SVG). */
static void report_html_charts(const report_t *r, tbuf *h)
{
    REPORT_LOCALS(r);
    /* chart 1: detection */
    int nck = 0;
    for (int c = 0; c < NMO_CK_COUNT; c++) nck += cfg->check_on[c];
    int W = 760, rowh = 30, lw = 170, top = 24;
    tb(h, "<h2>Effective mutants detected on main inputs</h2>\n");
    tb(h, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"detected effective mutants per check\">\n", W + 80,
       top + nck * rowh + 20);
    tb(h, "<text x=\"%d\" y=\"14\" font-size=\"12\" fill=\"#5a6578\">of %ld effective mutants (bar length = share "
           "detected)</text>\n", lw, E);
    int row = 0;
    for (int c = 0; c < NMO_CK_COUNT; c++) {
        if (!cfg->check_on[c]) continue;
        double f = E ? (double)S.det[0][c] / (double)E : 0;
        int y = top + row * rowh;
        tb(h, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"end\">%s</text>", lw - 8, y + 18, nmo_ck_label((nmo_ck)c));
        tb(h, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"20\" fill=\"#eef1f6\"/>", lw, y + 4, W - lw);
        tb(h, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"20\" fill=\"%s\"/>", lw, y + 4, f * (W - lw),
           c == 0 ? "#2b6cb0" : "#a0aec0");
        tb(h, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">%ld (%.0f%%)</text>\n", lw + f * (W - lw) + 6, y + 19, S.det[0][c],
           100 * f);
        row++;
    }
    tb(h, "</svg>\n");
    tb(h, "<p>By deviation from the reference beyond the largest deviation of any correct variant on the same main "
           "input: <b>%ld gross</b> (&gt; %d ulps) and <b>%ld rounding-level</b> effective mutants.</p>\n<table><tr><th>check"
           "</th><th>gross: detected</th><th>rounding-level: detected</th></tr>\n",
       S.gross, GROSS_ULPS, S.rlevel);
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c])
            tb(h, "<tr><td>%s</td><td>%ld / %ld (%.1f%%)</td><td>%ld / %ld</td></tr>\n", nmo_ck_label((nmo_ck)c),
               S.gross_det[c], S.gross, pct(S.gross_det[c], S.gross), S.rlevel_det[c], S.rlevel);
    tb(h, "</table>\n");
    /* chart 2: false alarms */
    long fmax = 1;
    for (int c = 0; c < NMO_CK_COUNT; c++)
        for (int r = 0; r < 2; r++) {
            long v = T[r].fa[0][c] + T[r].fa[1][c];
            if (v > fmax) fmax = v;
        }
    tb(h, "<h2>False alarms on correct runs</h2>\n<div class=\"legend\"><span style=\"background:#c53030\"></span>correct "
           "runs (%ld)<span style=\"background:#ed8936\"></span>behaviour-preserving runs (%ld) &mdash; main + shifted "
           "inputs</div>\n",
       T[0].runs[0] + T[0].runs[1], T[1].runs[0] + T[1].runs[1]);
    tb(h, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"false alarms per check\">\n", W + 80, 8 + nck * 44);
    row = 0;
    for (int c = 0; c < NMO_CK_COUNT; c++) {
        if (!cfg->check_on[c]) continue;
        int y = 4 + row * 44;
        tb(h, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"end\">%s</text>", lw - 8, y + 24, nmo_ck_label((nmo_ck)c));
        for (int r = 0; r < 2; r++) {
            long v = T[r].fa[0][c] + T[r].fa[1][c];
            double f = (double)v / (double)fmax;
            tb(h, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>", lw, y + 4 + r * 18,
               v ? (f * (W - lw) < 2 ? 2 : f * (W - lw)) : 0, r ? "#ed8936" : "#c53030");
            tb(h, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%ld</text>", lw + f * (W - lw) + 6, y + 17 + r * 18, v);
        }
        tb(h, "\n");
        row++;
    }
    tb(h, "</svg>\n");
}

/* report.html: the side-by-side, per-operator, per-mutation-operator and tolerance tables. */
static void report_html_tables(const report_t *r, tbuf *h)
{
    REPORT_LOCALS(r);
    tb(h, "<h2>Side by side</h2>\n<table><tr><th>check</th><th>detected (main)</th><th>detected (shifted)</th><th>false alarms "
           "correct (main/shifted)</th><th>false alarms bp (main/shifted)</th><th>rule</th></tr>\n");
    for (int c = 0; c < NMO_CK_COUNT; c++) {
        if (!cfg->check_on[c]) continue;
        tb(h, "<tr><td>%s</td><td>%ld / %ld (%.1f%%)</td><td>%ld / %ld</td><td class=\"%s\">%ld / %ld</td><td class=\"%s\">%ld / "
               "%ld</td><td style=\"text-align:left\">",
           nmo_ck_label((nmo_ck)c), S.det[0][c], E, pct(S.det[0][c], E), S.det[1][c], S.eff_shift,
           T[0].fa[0][c] + T[0].fa[1][c] ? "bad" : "good", T[0].fa[0][c], T[0].fa[1][c],
           T[1].fa[0][c] + T[1].fa[1][c] ? "bad" : "good", T[1].fa[0][c], T[1].fa[1][c]);
        html_esc(h, nmo_ck_rule((nmo_ck)c));
        tb(h, "</td></tr>\n");
    }
    tb(h, "</table>\n<p>numoracle INCONCLUSIVE (never a pass): correct runs %ld main / %ld shifted; behaviour-preserving runs "
           "%ld main / %ld shifted. Mutants: %ld (%ld generated, %ld hand-written), %ld stillborn, %ld/%ld/%ld crashed/timed "
           "out/errored on the probe input, %ld evaluated, %ld effective on main inputs, %ld never effective.</p>\n",
       T[0].inc[0], T[0].inc[1], T[1].inc[0], T[1].inc[1], S.total, S.gen, S.hand, S.stillborn, S.probe_killed[0],
       S.probe_killed[1], S.probe_killed[2], S.evaluated, S.eff_main, S.equivalent);
    tb(h, "<h2>Per operator (main inputs)</h2>\n<table><tr><th>operator</th><th>effective</th>");
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c]) tb(h, "<th>%s</th>", nmo_ck_name((nmo_ck)c));
    tb(h, "<th>correct+bp runs</th><th>numoracle false alarms</th><th>inconclusive (shifted)</th></tr>\n");
    for (int o = 0; o < cfg->nops; o++) {
        tb(h, "<tr><td>%s</td><td>%ld</td>", byop[o].name, byop[o].eff_main);
        for (int c = 0; c < NMO_CK_COUNT; c++) {
            if (!cfg->check_on[c]) continue;
            double f = byop[o].eff_main ? (double)byop[o].det[c] / (double)byop[o].eff_main : 0;
            tb(h, "<td style=\"background:rgba(43,108,176,%.2f)\">%ld</td>", 0.08 + 0.5 * f, byop[o].det[c]);
        }
        long runs = a->role[o][0].runs[0] + a->role[o][0].runs[1] + a->role[o][1].runs[0] + a->role[o][1].runs[1];
        long fan = a->role[o][0].fa[0][0] + a->role[o][0].fa[1][0] + a->role[o][1].fa[0][0] + a->role[o][1].fa[1][0];
        tb(h, "<td>%ld</td><td class=\"%s\">%ld</td><td>%ld</td></tr>\n", runs, fan ? "bad" : "good", fan,
           a->role[o][0].inc[1] + a->role[o][1].inc[1]);
    }
    tb(h, "</table>\n<h2>Per mutation operator (main inputs)</h2>\n<table><tr><th>mutation operator</th><th>mutants</th>"
           "<th>effective</th>");
    for (int c = 0; c < NMO_CK_COUNT; c++)
        if (cfg->check_on[c]) tb(h, "<th>%s</th>", nmo_ck_name((nmo_ck)c));
    tb(h, "</tr>\n");
    for (int k = 0; k < nbymop; k++) {
        tb(h, "<tr><td>%s</td><td>%ld</td><td>%ld</td>", bymop[k].name, bymop[k].mutants, bymop[k].eff_main);
        for (int c = 0; c < NMO_CK_COUNT; c++)
            if (cfg->check_on[c]) tb(h, "<td>%ld</td>", bymop[k].det[c]);
        tb(h, "</tr>\n");
    }
    tb(h, "</table>\n<h2>Smallest equal atol = rtol passing every correct run</h2>\n<table><tr><th>operator</th><th>dtype</th>"
           "<th>family</th><th>runs of correct variants</th><th>all correct variants</th><th>default variant</th></tr>\n");
    for (int o = 0; o < cfg->nops; o++)
        for (int d = 0; d < cfg->ndt; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++) {
                if (!a->teq_runs[o][d][f]) continue;
                char x1[32], x2[32];
                tb(h, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%ld</td><td>%s</td><td>%s</td></tr>\n", cfg->ops[o]->name,
                   nmo_fmt_name(cfg->dt[d]), nmo_family_name(f), a->teq_runs[o][d][f], fmt_g(x1, sizeof x1, a->teq[o][d][f]),
                   fmt_g(x2, sizeof x2, a->teq_def[o][d][f]));
            }
}

/* report.html: every mutant, the missed effective ones first, with its diff. */
static void report_html_mutants(const report_t *r, tbuf *h)
{
    REPORT_LOCALS(r);
    tb(h, "</table>\n<h2>Mutants</h2>\n<p>Effective mutants numoracle missed on main inputs come first.</p>\n");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < a->nm; i++) {
            rmut *m = &a->m[i];
            int miss = strcmp(m->kind, "null") != 0 && m->eff[0] && !m->det[0][0];
            if (miss != (pass == 0)) continue;
            const char *state = strcmp(m->status, "stillborn") == 0 ? "stillborn"
                                : (m->probe[0] && strcmp(m->probe, "ok") && strcmp(m->probe, "nondet")) ? m->probe
                                : m->eff[0] ? "effective" : m->eff[1] ? "effective (shifted only)" : "never effective";
            tb(h, "<details><summary><code>%s</code> %s &middot; %s &middot; %s:%d &middot; %s &middot; ", m->id, m->op, m->mutop,
               m->file, m->line, state);
            html_esc(h, m->desc);
            if (m->eff[0]) {
                tb(h, " &middot; caught by:");
                int any = 0;
                for (int c = 0; c < NMO_CK_COUNT; c++)
                    if (cfg->check_on[c] && m->det[0][c]) tb(h, " %s", nmo_ck_name((nmo_ck)c)), any = 1;
                if (!any) tb(h, " <span class=\"bad\">none</span>");
            }
            tb(h, "</summary>");
            if (m->diff) {
                tb(h, "<pre>");
                html_esc(h, m->diff);
                tb(h, "</pre>");
            }
            if (m->cc_error[0]) {
                tb(h, "<pre>");
                html_esc(h, m->cc_error);
                tb(h, "</pre>");
            }
            tb(h, "</details>\n");
        }
    tb(h, "</body></html>\n");

}

/* Write report.{json,md,html} into out_dir, then the summary lines on out (NULL: none). */
static nmo_status report_write(const report_t *r, const char *out_dir, const char *js, const tbuf *mdp, const tbuf *hp,
                               FILE *out, nmo_err *err)
{
    REPORT_LOCALS(r);
    const tbuf md = *mdp, h = *hp;
    const int null_bad = r->null_bad;
    nmo_status st = NMO_OK;
    if (nmo_camp_mkdirs(out_dir) != 0) st = nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", out_dir, strerror(errno));
    char p[1200];
    if (st == NMO_OK) {
        snprintf(p, sizeof p, "%s/report.json", out_dir);
        size_t jl = js ? strlen(js) : 0;
        char *jsn = js ? malloc(jl + 2) : NULL;
        if (jsn) {
            memcpy(jsn, js, jl);
            jsn[jl] = '\n';
            jsn[jl + 1] = '\0';
        }
        st = jsn ? nmo_camp_write_file(p, jsn, jl + 1, err) : nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        free(jsn);
    }
    if (st == NMO_OK) {
        snprintf(p, sizeof p, "%s/report.md", out_dir);
        st = nmo_camp_write_file(p, md.p ? md.p : "", md.n, err);
    }
    if (st == NMO_OK) {
        snprintf(p, sizeof p, "%s/report.html", out_dir);
        st = nmo_camp_write_file(p, h.p ? h.p : "", h.n, err);
    }
    if (st == NMO_OK && out) {
        fprintf(out, "campaign %s: %ld mutants (%ld generated, %ld hand-written), %ld stillborn, %ld evaluated, %ld effective on main inputs\n",
                cfg->name, S.total, S.gen, S.hand, S.stillborn, S.evaluated, S.eff_main);
        fprintf(out, "%-20s %18s %16s %22s\n", "check", "detected (main)", "false alarms", "false alarms (bp)");
        for (int c = 0; c < NMO_CK_COUNT; c++) {
            if (!cfg->check_on[c]) continue;
            char d[64], f1[64], f2[64];
            snprintf(d, sizeof d, "%ld/%ld (%.1f%%)", S.det[0][c], E, pct(S.det[0][c], E));
            snprintf(f1, sizeof f1, "%ld/%ld", T[0].fa[0][c] + T[0].fa[1][c], T[0].runs[0] + T[0].runs[1]);
            snprintf(f2, sizeof f2, "%ld/%ld", T[1].fa[0][c] + T[1].fa[1][c], T[1].runs[0] + T[1].runs[1]);
            fprintf(out, "%-20s %18s %16s %22s\n", nmo_ck_label((nmo_ck)c), d, f1, f2);
        }
        fprintf(out, "numoracle inconclusive on shifted inputs: %ld correct, %ld behaviour-preserving runs\n", T[0].inc[1],
                T[1].inc[1]);
        fprintf(out, "by deviation (main): gross (> %d ulps beyond the correct variants) %ld, numoracle detects %ld; "
                     "rounding-level %ld, numoracle detects %ld\n",
                GROSS_ULPS, S.gross, S.gross_det[0], S.rlevel, S.rlevel_det[0]);
        if (null_bad) fprintf(out, "WARNING: a null-mutant control is effective or stillborn: see the report\n");
        fprintf(out, "report: %s/report.{json,md,html}\n", out_dir);
    }
    return st;
}

nmo_status nmo_camp_report(const nmo_camp_cfg *cfg, const char *const *journals, int nj, const char *out_dir, FILE *out,
                           nmo_err *err)
{
    agg_ctx *a = calloc(1, sizeof *a);
    if (!a) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    a->cfg = cfg;
    for (int o = 0; o < NMO_CAMP_MAX_OPS; o++)
        for (int d = 0; d < NMO_CAMP_MAX_DT; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++) a->teq[o][d][f] = a->teq_def[o][d][f] = NAN;
    nmo_status st = stream(journals, nj, agg_line, a, err);
    if (st != NMO_OK) {
        free(a);
        return st;
    }
    report_t *r = calloc(1, sizeof *r);
    if (!r) {
        free(a);
        return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    }
    r->cfg = cfg;
    r->a = a;
    /* probes whose mutant record came later (merged journals): second pass over probes only */
    nmo_eng_tolset ts = {0};
    if (cfg->check_on[NMO_CK_P999]) st = nmo_eng_calibrate(&ts, cfg, journals, nj, err);
    if (st != NMO_OK) {
        free(r);
        free(a);
        return st;
    }
    r->ts = ts;
    report_join(r);
    qsort(a->m, (size_t)a->nm, sizeof *a->m, cmp_rmut);
    report_summarize(r);
    report_totals(r);

    cJSON *R = cJSON_CreateObject();
    report_json_counts(r, R);
    report_json_geometry(r, R);
    report_json_lists(r, R);
    char *js = nmo__json_print(R, 1);
    cJSON_Delete(R);
    tbuf md = {0}, h = {0};
    report_markdown(r, &md);
    report_markdown_geometry(r, &md);
    report_html_head(r, &h);
    report_html_charts(r, &h);
    report_html_tables(r, &h);
    report_html_geometry(r, &h);
    report_html_mutants(r, &h);
    st = report_write(r, out_dir, js, &md, &h, out, err);
    free(js);
    free(md.p);
    free(h.p);
    for (int i = 0; i < a->nm; i++) free(a->m[i].diff);
    free(a->m);
    free(a->mr);
    free(a->br);
    free(a->im);
    free(a->mids.h);
    free(ts.t);
    free(a);
    free(r);
    return st;
}
