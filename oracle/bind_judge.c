/* numoracle: the four-judgment matrix for a binding's callables (nmo_bind_judge, bind.h).
 * The contract, the cell resolution and the judging are the library's (contract.c,
 * judge.c, invariance.c); this file only adapts a binding's callback to nmo_inv_run_fn,
 * records every call's provenance against the profile, and writes the JSON report. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nmo_internal.h"
#include "numoracle/numoracle.h"

typedef struct {
    nmo_bind_run_fn fn;
    void *ctx;
    const nmo_contract_profile *pr;
    int rejected;         /* a call's record disagreed with the profile: the cell stops */
    char why[400];
    int64_t calls;
    int have_rec;
    nmo_bind_prov rec;    /* the first call's record (for the report) */
    char out_dt[NMO_MAX_TENSORS][16];
    char in_dt[NMO_MAX_TENSORS][16];
} tramp;

/* nmo_inv_run_fn over the binding's callback: views of the case's tensors, then the
 * provenance rule (nmo_judge_prov_ok, one copy with the CLI's) on what the call recorded
 * and dtype drift on every output. */
static nmo_status tramp_run(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err)
{
    tramp *t = ctx;
    if (t->rejected) return nmo_err_set(err, NMO_ERR_DATA, "provenance: %s", t->why);
    nmo_bind_view iv[NMO_MAX_TENSORS], ov[NMO_MAX_TENSORS];
    memset(iv, 0, sizeof iv);
    memset(ov, 0, sizeof ov);
    for (int k = 0; k < c->n_in; k++) {
        const nmo_tensor *x = &c->in[k];
        /* an absent input (recomputed by the kernel) is not handed over: a callable that
         * took it would be judged on a value its reference does not assume */
        void *d = (c->absent >> k & 1u) ? NULL : x->data;
        iv[k] = (nmo_bind_view){c->op->in[k].name, nmo_fmt_name(x->dtype), x->ndims, x->dims, x->strides,
                                d ? nmo_tensor_span(x) : 0, d, ""};
    }
    for (int k = 0; k < c->n_out; k++) {
        nmo_tensor *y = &out[k];
        ov[k] = (nmo_bind_view){c->op->out[k].name, nmo_fmt_name(y->dtype), y->ndims, y->dims, y->strides,
                                nmo_tensor_span(y), y->data, ""};
    }
    const char *pn[NMO_MAX_PARAMS];
    for (int i = 0; i < c->op->n_param; i++) pn[i] = c->op->param[i].name;
    nmo_bind_prov pv;
    memset(&pv, 0, sizeof pv);
    pv.tf32 = pv.rpr = pv.deterministic = -1;
    char msg[512] = "";
    int rc = t->fn(t->ctx, c->op->name, c->op->n_param, pn, c->param, c->n_in, iv, c->n_out, ov, &pv, msg,
                   (int)sizeof msg);
    t->calls++;
    msg[sizeof msg - 1] = '\0';
    if (rc == NMO_ERR_UNSUPPORTED) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s", msg[0] ? msg : "declined");
    if (rc != 0)
        return nmo_err_set(err, rc > 0 && rc < 64 ? (nmo_status)rc : NMO_ERR_GENERIC, "candidate %s: %s",
                           c->op->name, msg[0] ? msg : "the callback failed");
    pv.backend[sizeof pv.backend - 1] = pv.device[sizeof pv.device - 1] = '\0';
    pv.device_name[sizeof pv.device_name - 1] = pv.cublas_ws[sizeof pv.cublas_ws - 1] = '\0';
    if (!t->have_rec) t->rec = pv, t->have_rec = 1;
    nmo_judge_prov p = {pv.backend[0] ? pv.backend : NULL, pv.device[0] ? pv.device : NULL, pv.tf32, pv.rpr,
                        pv.deterministic, pv.device_name[0] ? pv.device_name : NULL,
                        pv.cublas_ws[0] ? pv.cublas_ws : NULL};
    char why[300];
    if (!nmo_judge_prov_ok(t->pr, &p, why, sizeof why)) {
        snprintf(t->why, sizeof t->why, "call %" PRId64 " of %s: %s", t->calls, c->op->name, why);
        t->rejected = 1;
    }
    /* the dtype each input reached the kernel in: a cast on the way (a fallback that
     * upcasts, a wrapper that casts to fp32) judges another kernel than the cell names */
    for (int k = 0; k < c->n_in && !t->rejected; k++) {
        if (!iv[k].data) continue;
        iv[k].got_dtype[sizeof iv[k].got_dtype - 1] = '\0';
        snprintf(t->in_dt[k], sizeof t->in_dt[k], "%s", iv[k].got_dtype);
        if (strcmp(iv[k].got_dtype, iv[k].dtype) != 0) {
            snprintf(t->why, sizeof t->why, "call %" PRId64 " of %s: input %s reached the kernel as %s; the cell "
                     "gives %s", t->calls, c->op->name, iv[k].name, iv[k].got_dtype[0] ? iv[k].got_dtype : "unrecorded",
                     iv[k].dtype);
            t->rejected = 1;
        }
    }
    for (int k = 0; k < c->n_out && !t->rejected; k++) {
        ov[k].got_dtype[sizeof ov[k].got_dtype - 1] = '\0';
        snprintf(t->out_dt[k], sizeof t->out_dt[k], "%s", ov[k].got_dtype);
        if (strcmp(ov[k].got_dtype, ov[k].dtype) != 0) {
            snprintf(t->why, sizeof t->why, "call %" PRId64 " of %s: output %s is %s; the cell stores %s", t->calls,
                     c->op->name, ov[k].name, ov[k].got_dtype[0] ? ov[k].got_dtype : "unrecorded", ov[k].dtype);
            t->rejected = 1;
        }
    }
    if (t->rejected) return nmo_err_set(err, NMO_ERR_DATA, "provenance: %s", t->why);
    return NMO_OK;
}

static void add_setting(cJSON *o, const char *name, int v)
{
    if (v < 0) cJSON_AddNullToObject(o, name);
    else cJSON_AddBoolToObject(o, name, v);
}

static void add_str(cJSON *o, const char *name, const char *v)
{
    if (v && v[0]) cJSON_AddStringToObject(o, name, v);
    else cJSON_AddNullToObject(o, name);
}

static cJSON *prov_json(const char *backend, const char *device, int tf32, int rpr, int det, const char *dname,
                        const char *ws)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "backend", backend);
    add_str(o, "device", device);
    add_str(o, "device_name", dname);
    add_setting(o, "tf32", tf32);
    add_setting(o, "reduced_precision_reduction", rpr);
    add_setting(o, "deterministic", det);
    add_str(o, "cublas_workspace", ws);
    return o;
}

static cJSON *cell_json(const nmo_cell *cell, nmo_judgment j, const nmo_op *op, const tramp *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "judgment", nmo_judgment_name(j));
    cJSON_AddStringToObject(o, "operator", op ? op->name : "");
    cJSON_AddStringToObject(o, "verdict", nmo_cell_verdict_name(cell->verdict));
    cJSON_AddBoolToObject(o, "required", cell->required);
    cJSON_AddStringToObject(o, "detail", cell->detail);
    cJSON_AddStringToObject(o, "where", cell->spec.where);
    if (cell->verdict == NMO_CELL_NA) return o;
    cJSON_AddStringToObject(o, "plan", cell->spec.plan[0] ? cell->spec.plan : "default");
    if (t && t->have_rec) {
        cJSON *pv = prov_json(t->rec.backend, t->rec.device, t->rec.tf32, t->rec.rpr, t->rec.deterministic,
                              t->rec.device_name, t->rec.cublas_ws);
        cJSON_AddNumberToObject(pv, "calls", (double)t->calls);
        cJSON *ids = cJSON_AddObjectToObject(pv, "input_dtypes");
        for (int k = 0; op && k < op->n_in; k++)
            if (t->in_dt[k][0]) cJSON_AddStringToObject(ids, op->in[k].name, t->in_dt[k]);
        cJSON *dts = cJSON_AddArrayToObject(pv, "output_dtypes");
        for (int k = 0; op && k < op->n_out; k++) cJSON_AddItemToArray(dts, cJSON_CreateString(t->out_dt[k]));
        cJSON_AddItemToObject(o, "provenance", pv);
    }
    if (j == NMO_J_FWD_ACC || j == NMO_J_GRAD_ACC) {
        cJSON *sd = cJSON_AddArrayToObject(o, "seeds");
        for (int s = 0; s < cell->nseeds && cell->verdict != NMO_CELL_REJECTED; s++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "seed", (double)cell->spec.seeds[s]);
            cJSON_AddStringToObject(e, "verdict", nmo_verdict_name(cell->seed_verdict[s]));
            cJSON_AddItemToArray(sd, e);
        }
        cJSON_AddNumberToObject(o, "elements", (double)cell->n_elems);
        cJSON_AddNumberToObject(o, "failing", (double)cell->n_fail);
        cJSON_AddNumberToObject(o, "inconclusive", (double)cell->n_inconc);
        return o;
    }
    cJSON *cf = cJSON_AddArrayToObject(o, "configurations");
    for (int i = 0; cell->have_inv && i < cell->inv.n; i++) {
        const nmo_inv_result *r = &cell->inv.res[i];
        char nb[32];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", nmo_inv_config_name(&r->cfg, nb, sizeof nb));
        cJSON_AddStringToObject(e, "outputs", r->summed ? "batch-summed" : "per-row");
        cJSON_AddBoolToObject(e, "identical", r->identical);
        cJSON_AddBoolToObject(e, "skipped", r->skipped);
        if (r->skipped) cJSON_AddStringToObject(e, "why", r->why);
        cJSON_AddNumberToObject(e, "calls", (double)r->calls);
        cJSON_AddNumberToObject(e, "compared", (double)r->compared);
        if (!r->identical && !r->skipped) {
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "output", op && r->k >= 0 && r->k < op->n_out ? op->out[r->k].name : "?");
            cJSON_AddNumberToObject(d, "row", (double)r->row);
            cJSON_AddNumberToObject(d, "element", (double)r->elem);
            cJSON_AddNumberToObject(d, "reference", r->ref);
            cJSON_AddNumberToObject(d, "candidate", r->got);
            char hb[24];
            snprintf(hb, sizeof hb, "0x%" PRIx64, r->ref_bits);
            cJSON_AddStringToObject(d, "reference_bits", hb);
            snprintf(hb, sizeof hb, "0x%" PRIx64, r->got_bits);
            cJSON_AddStringToObject(d, "candidate_bits", hb);
            cJSON_AddItemToObject(e, "first_difference", d);
        }
        cJSON_AddItemToArray(cf, e);
    }
    if (cell->have_inv) cJSON_AddNumberToObject(o, "batch", (double)cell->inv.batch);
    return o;
}

static nmo_bind_result *fail(int st, const char *msg)
{
    return nmo__bind_result_make(st ? st : NMO_ERR_GENERIC, msg, NULL, -1);
}

NMO_API nmo_bind_result *nmo_bind_judge(const nmo_bind_judge_req *q)
{
    char msg[1024];
    if (!q) return fail(NMO_ERR_USAGE, "nmo_bind_judge: no request");
    if (q->api_version != NMO_API_VERSION) {
        snprintf(msg, sizeof msg, "api_version %d: this library implements NMO_API_VERSION %d", q->api_version,
                 NMO_API_VERSION);
        return fail(NMO_ERR_USAGE, msg);
    }
    if (!q->contract || !q->op || !q->dtype) return fail(NMO_ERR_USAGE, "nmo_bind_judge: contract, op and dtype are required");
    nmo_err err = {{0}};
    nmo_contract *ct = NULL;
    nmo_status ls = nmo_contract_load(&ct, q->contract, &err);
    if (ls != NMO_OK) return fail(ls, err.msg);
    nmo_bind_result *res = NULL;
    int oi = nmo_contract_op_find(ct, q->op);
    nmo_fmt dt;
    int pi = -1;
    if (oi < 0) {
        snprintf(msg, sizeof msg, "%s: operators: no operator '%s' in the contract", q->contract, q->op);
        res = fail(NMO_ERR_UNKNOWN_OP, msg);
    } else if (nmo_fmt_from_name(&dt, q->dtype) != NMO_OK ||
               !(nmo_contract_op_at(ct, oi)->dtypes >> dt & 1u)) {
        snprintf(msg, sizeof msg, "%s: operators.%s does not cover dtype '%s'", q->contract, q->op, q->dtype);
        res = fail(NMO_ERR_UNKNOWN_DTYPE, msg);
    } else if (q->profile) {
        if ((pi = nmo_contract_profile_find(ct, q->profile)) < 0) {
            snprintf(msg, sizeof msg, "%s: profiles: no profile '%s'", q->contract, q->profile);
            res = fail(NMO_ERR_USAGE, msg);
        }
    } else {
        for (int i = nmo_contract_profile_count(ct) - 1; i >= 0; i--)
            if (strcmp(nmo_contract_profile_at(ct, i)->backend, "python") == 0) pi = i;
        if (pi < 0) {
            snprintf(msg, sizeof msg, "%s: profiles: no profile of backend python: name one", q->contract);
            res = fail(NMO_ERR_USAGE, msg);
        }
    }
    if (res) {
        nmo_contract_free(ct);
        return res;
    }
    const nmo_contract_profile *pr = nmo_contract_profile_at(ct, pi);
    const nmo_contract_op *co = nmo_contract_op_at(ct, oi);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "api_version", NMO_API_VERSION);
    cJSON *cj = cJSON_AddObjectToObject(root, "contract");
    cJSON_AddStringToObject(cj, "name", nmo_contract_name(ct));
    cJSON_AddNumberToObject(cj, "version", nmo_contract_version(ct));
    cJSON_AddStringToObject(cj, "path", q->contract);
    cJSON *pj = prov_json(pr->backend, pr->device, pr->tf32, pr->rpr, pr->deterministic, pr->device_name,
                          pr->cublas_ws);
    cJSON_AddStringToObject(pj, "name", pr->name);
    cJSON_AddItemToObject(root, "profile", pj);
    cJSON_AddStringToObject(root, "op", co->op->name);
    cJSON_AddStringToObject(root, "dtype", nmo_fmt_name(dt));
    cJSON_AddStringToObject(root, "candidate", q->label ? q->label : "python");
    cJSON_AddItemToObject(root, "recorded",
                          prov_json(q->prov.backend, q->prov.device, q->prov.tf32, q->prov.rpr, q->prov.deterministic,
                                    q->prov.device_name, q->prov.cublas_ws));
    cJSON *cells = cJSON_AddArrayToObject(root, "cells");
    int exit_code = 0, nreq_fail = 0, st = NMO_OK;
    nmo_cell *cell = malloc(sizeof *cell);
    if (!cell) st = nmo_err_set(&err, NMO_ERR_NOMEM, "out of memory");
    for (int j = 0; j < NMO_J_COUNT && st == NMO_OK; j++) {
        if (q->judgments && !(q->judgments >> j & 1u)) continue;
        int grad = j == NMO_J_GRAD_ACC || j == NMO_J_GRAD_INV;
        tramp t;
        memset(&t, 0, sizeof t);
        t.fn = grad ? q->run_grad : q->run_fwd;
        t.ctx = q->ctx;
        t.pr = pr;
        char dev[sizeof q->prov.device + 1], be[sizeof q->prov.backend + 1];
        char dn[sizeof q->prov.device_name + 1], ws[sizeof q->prov.cublas_ws + 1];
        snprintf(dev, sizeof dev, "%.*s", (int)sizeof q->prov.device, q->prov.device);
        snprintf(be, sizeof be, "%.*s", (int)sizeof q->prov.backend, q->prov.backend);
        snprintf(dn, sizeof dn, "%.*s", (int)sizeof q->prov.device_name, q->prov.device_name);
        snprintf(ws, sizeof ws, "%.*s", (int)sizeof q->prov.cublas_ws, q->prov.cublas_ws);
        char label[128];
        if (t.fn) snprintf(label, sizeof label, "%s", q->label ? q->label : "python");
        else snprintf(label, sizeof label, "no %s callable given", grad ? "gradient" : "forward");
        nmo_judge_cand cand = {label, be[0] ? be : NULL, t.fn ? tramp_run : NULL, &t,
                               q->prov.tf32, q->prov.rpr, q->prov.deterministic, dev[0] ? dev : NULL,
                               dn[0] ? dn : NULL, ws[0] ? ws : NULL};
        nmo_err e2 = {{0}};
        nmo_status s = nmo_judge_cell(cell, ct, oi, dt, pi, (nmo_judgment)j, &cand, &e2);
        if (t.rejected) {
            /* a call's record disagreed: whatever was judged so far is not reported */
            cell->verdict = NMO_CELL_REJECTED;
            cell->have_inv = 0;
            cell->nseeds = 0;
            cell->n_elems = cell->n_fail = cell->n_inconc = 0;
            snprintf(cell->detail, sizeof cell->detail, "provenance: %s", t.why);
        } else if (s != NMO_OK) {
            st = s;
            err = e2;
            break;
        }
        cJSON_AddItemToArray(cells, cell_json(cell, (nmo_judgment)j, grad ? co->grad : co->op, &t));
        if (cell->required) {
            if (cell->verdict == NMO_CELL_FAIL || cell->verdict == NMO_CELL_REJECTED) exit_code = 1, nreq_fail++;
            else if (cell->verdict != NMO_CELL_PASS) {
                nreq_fail++;
                if (exit_code == 0) exit_code = 3;
            }
        }
    }
    free(cell);
    nmo_contract_free(ct);
    if (st != NMO_OK) {
        cJSON_Delete(root);
        return fail(st, err.msg);
    }
    cJSON *sm = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddStringToObject(sm, "verdict", exit_code == 0 ? "PASS" : exit_code == 1 ? "FAIL" : "INCONCLUSIVE");
    cJSON_AddNumberToObject(sm, "required_failing", nreq_fail);
    cJSON_AddNumberToObject(sm, "exit", exit_code);
    char *text = nmo__json_print(root, 1);
    cJSON_Delete(root);
    if (!text) return fail(NMO_ERR_NOMEM, "out of memory");
    return nmo__bind_result_make(NMO_OK, "", text,
                                 exit_code == 0 ? NMO_PASS : exit_code == 1 ? NMO_FAIL : NMO_INCONCLUSIVE);
}
