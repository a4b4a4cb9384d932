/* numoracle: judging one cell of the four-judgment matrix (numoracle/contract.h):
 * provenance against the profile first, then accuracy (nmo_check over the contract's
 * seeds) or invariance (nmo_inv_judge over the contract's configurations). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/contract.h"

const char *nmo_cell_verdict_name(nmo_cell_verdict v)
{
    static const char *const n[] = {"PASS", "FAIL", "INCONCLUSIVE", "N/A", "SKIPPED", "REJECTED"};
    return (unsigned)v < sizeof n / sizeof n[0] ? n[v] : "?";
}

/* A profile setting the run must match (-1 in the profile: not stated). */
static int setting_ok(char *why, size_t n, const char *name, int want, int got)
{
    if (want < 0 || want == got) return 1;
    if (got < 0) snprintf(why, n, "the run does not record %s; the profile requires %s=%s", name, name,
                          want ? "on" : "off");
    else snprintf(why, n, "the run has %s=%s; the profile requires %s=%s", name, got ? "on" : "off", name,
                  want ? "on" : "off");
    return 0;
}

int nmo_judge_prov_ok(const nmo_contract_profile *pr, const nmo_judge_prov *p, char *why, size_t n)
{
    why[0] = '\0';
    if (!p->backend || strcmp(p->backend, pr->backend) != 0) {
        snprintf(why, n, "the run's backend is %s; profile %s requires %s", p->backend ? p->backend : "unrecorded",
                 pr->name, pr->backend);
        return 0;
    }
    /* "cuda" matches "cuda:1": the profile names a device kind */
    size_t dl = strlen(pr->device);
    if (dl && (!p->device || strncmp(p->device, pr->device, dl) != 0 || (p->device[dl] && p->device[dl] != ':'))) {
        snprintf(why, n, "the run's device is %s; profile %s requires %s", p->device ? p->device : "unrecorded",
                 pr->name, pr->device);
        return 0;
    }
    if (pr->device_name[0] &&
        (!p->device_name || strncmp(p->device_name, pr->device_name, strlen(pr->device_name)) != 0)) {
        snprintf(why, n, "the run's device name is %s; profile %s requires %s",
                 p->device_name ? p->device_name : "unrecorded", pr->name, pr->device_name);
        return 0;
    }
    if (!setting_ok(why, n, "tf32", pr->tf32, p->tf32) ||
        !setting_ok(why, n, "reduced_precision_reduction", pr->rpr, p->rpr) ||
        !setting_ok(why, n, "deterministic", pr->deterministic, p->deterministic))
        return 0;
    if (pr->cublas_ws[0]) {
        int ok = 0;
        size_t wl = p->cublas_ws ? strlen(p->cublas_ws) : 0;
        for (const char *s = pr->cublas_ws; p->cublas_ws && *s && !ok;) {
            const char *e = strchr(s, ';');
            size_t l = e ? (size_t)(e - s) : strlen(s);
            ok = l == wl && strncmp(s, p->cublas_ws, l) == 0;
            s += l + (e != NULL);
        }
        if (!ok) {
            snprintf(why, n, "the run has CUBLAS_WORKSPACE_CONFIG %s; profile %s allows %s",
                     p->cublas_ws ? p->cublas_ws : "unrecorded", pr->name, pr->cublas_ws);
            return 0;
        }
    }
    return 1;
}

static void add_detail(nmo_cell *cell, const char *fmt, const char *a)
{
    size_t l = strlen(cell->detail);
    if (l + 4 < sizeof cell->detail) snprintf(cell->detail + l, sizeof cell->detail - l, fmt, a);
}

static nmo_status build_case(nmo_case *c, const nmo_contract_op *co, int grad, nmo_fmt dt, const nmo_jspec *js,
                             uint64_t seed, nmo_err *err)
{
    const nmo_op *op = grad ? co->grad : co->op;
    nmo_plan plan;
    nmo_plan_default(&plan, dt);
    if (js->plan[0]) NMO_RETURN_IF_ERR(nmo_plan_parse_op(&plan, op->name, js->plan, err));
    /* the cell's own shape (invariance cells may state one), else the operator's */
    int ns = js->nshape ? js->nshape : grad ? co->gnshape : co->nshape;
    const int64_t *shape = js->nshape ? js->shape : grad ? co->gshape : co->shape;
    NMO_RETURN_IF_ERR(nmo_case_init_params(c, op, &plan, ns, shape, grad ? co->gparam : co->param,
                                           grad ? co->gpset : co->pset, err));
    nmo_case_fill(c, js->family, seed);
    /* inputs the contract says the gradient callables recompute (autograd's own rstd):
     * judged as absent, the reference enclosing every recomputation (DESIGN §6.1) */
    if (grad) c->absent = co->gabsent;
    return NMO_OK;
}

static nmo_status judge_accuracy(nmo_cell *cell, const nmo_contract_op *co, int grad, nmo_fmt dt,
                                 const nmo_judge_cand *cand, nmo_err *err)
{
    const nmo_jspec *js = &cell->spec;
    int any_fail = 0, any_inc = 0;
    cell->nseeds = js->nseeds;
    for (int s = 0; s < js->nseeds; s++) {
        nmo_case c;
        NMO_RETURN_IF_ERR(build_case(&c, co, grad, dt, js, js->seeds[s], err));
        nmo_tensor out[NMO_MAX_TENSORS];
        memset(out, 0, sizeof out);
        nmo_status st = nmo_case_alloc_outputs(&c, out, 1, err);
        if (st == NMO_OK) st = cand->run(cand->ctx, &c, out, err);
        if (st == NMO_ERR_UNSUPPORTED) {
            cell->verdict = NMO_CELL_SKIPPED;
            snprintf(cell->detail, sizeof cell->detail, "the candidate declines the case: %s", err ? err->msg : "");
            for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
            nmo_case_free(&c);
            return NMO_OK;
        }
        nmo_report rep;
        memset(&rep, 0, sizeof rep);
        nmo_check_opts opts = {0};
        if (st == NMO_OK) st = nmo_check(&rep, &c, out, &opts, err);
        if (st == NMO_OK) {
            cell->seed_verdict[s] = rep.verdict;
            cell->n_elems += rep.n;
            cell->n_fail += rep.n_fail;
            cell->n_inconc += rep.n_inconc;
            char one[400];
            if (rep.verdict != NMO_PASS && !any_fail && rep.has_worst) {
                const nmo_elem_info *w = &rep.worst;
                snprintf(one, sizeof one,
                         "seed %" PRIu64 ": %s, worst %s element %" PRId64 ": candidate %.9g, R = [%.9g, %.9g]",
                         js->seeds[s], nmo_verdict_name(rep.verdict), c.op->out[w->k].name, w->index, w->cand,
                         w->rlo, w->rhi);
                cell->detail[0] = '\0';
                add_detail(cell, "%s", one);
            }
            any_fail |= rep.verdict == NMO_FAIL;
            any_inc |= rep.verdict == NMO_INCONCLUSIVE;
        }
        nmo_report_free(&rep);
        for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
        nmo_case_free(&c);
        if (st != NMO_OK) return st;
    }
    cell->verdict = any_fail ? NMO_CELL_FAIL : any_inc ? NMO_CELL_INCONCLUSIVE : NMO_CELL_PASS;
    if (cell->verdict == NMO_CELL_PASS)
        snprintf(cell->detail, sizeof cell->detail, "%d seed%s, %" PRId64 " elements in R", js->nseeds,
                 js->nseeds == 1 ? "" : "s", cell->n_elems);
    return NMO_OK;
}

static nmo_status judge_invariance(nmo_cell *cell, const nmo_contract_op *co, int grad, nmo_fmt dt,
                                   const nmo_judge_cand *cand, const char *what, nmo_err *err)
{
    const nmo_jspec *js = &cell->spec;
    nmo_case c;
    NMO_RETURN_IF_ERR(build_case(&c, co, grad, dt, js, js->seeds[0], err));
    nmo_inv_layout lay;
    nmo_status st = nmo_inv_layout_find(&lay, &c, err);
    const char *opn = c.op->name;
    /* the contract must say what happens to every output */
    if (st == NMO_OK && lay.n_sum_out && !js->nsum && !js->sum_na[0]) {
        int k = 0;
        while (lay.out_role[k] != NMO_INV_SUMMED) k++;
        st = nmo_err_set(err, NMO_ERR_PARSE,
                         "%s: %s: %s has batch-summed output %s: name its orderings (batch_summed) or say why "
                         "not (batch_summed_na)",
                         what, js->where, opn, c.op->out[k].name);
    }
    if (st == NMO_OK && js->nsum && !lay.n_sum_out)
        st = nmo_err_set(err, NMO_ERR_PARSE, "%s: %s.batch_summed: %s has no batch-summed output", what, js->where, opn);
    if (st == NMO_OK && js->ncfg && !lay.n_row_out)
        st = nmo_err_set(err, NMO_ERR_PARSE,
                         "%s: %s.configurations: %s has no per-row output (every output is summed over the "
                         "batch): give [] and name batch_summed orderings",
                         what, js->where, opn);
    if (st == NMO_OK && !js->ncfg && lay.n_row_out)
        st = nmo_err_set(err, NMO_ERR_PARSE, "%s: %s.configurations: empty, but %s has per-row outputs", what,
                         js->where, opn);
    if (st == NMO_OK)
        st = nmo_inv_judge(&cell->inv, &c, js->cfg, js->ncfg, js->sum_cfg, js->nsum, cand->run, cand->ctx,
                           js->family, js->seeds[0] + 0x9e3779b9u, err);
    nmo_case_free(&c);
    if (st != NMO_OK) return st;
    cell->have_inv = 1;
    const nmo_inv_report *r = &cell->inv;
    int first_diff = -1;
    for (int i = 0; i < r->n && first_diff < 0; i++)
        if (!r->res[i].identical) first_diff = i;
    if (first_diff >= 0) {
        cell->verdict = NMO_CELL_FAIL;
        nmo_inv_result_text(cell->detail, sizeof cell->detail, &r->res[first_diff], grad ? co->grad : co->op);
    } else if (r->n_skipped) {
        cell->verdict = NMO_CELL_INCONCLUSIVE;
        for (int i = 0; i < r->n; i++)
            if (r->res[i].skipped) {
                nmo_inv_result_text(cell->detail, sizeof cell->detail, &r->res[i], grad ? co->grad : co->op);
                break;
            }
    } else {
        cell->verdict = NMO_CELL_PASS;
        int64_t calls = 0, n = 0;
        for (int i = 0; i < r->n; i++) calls += r->res[i].calls, n += r->res[i].compared;
        snprintf(cell->detail, sizeof cell->detail,
                 "%d configuration%s identical to the reference (batch %" PRId64 "): %" PRId64 " calls, %" PRId64
                 " elements",
                 r->n, r->n == 1 ? "" : "s", r->batch, calls, n);
    }
    if (lay.n_sum_out && !js->nsum) {
        size_t l = strlen(cell->detail);
        snprintf(cell->detail + l, sizeof cell->detail - l, "; batch-summed outputs N/A: %s", js->sum_na);
    }
    return NMO_OK;
}

nmo_status nmo_judge_cell(nmo_cell *cell, const nmo_contract *ct, int op, nmo_fmt dt, int profile,
                          nmo_judgment j, const nmo_judge_cand *cand, nmo_err *err)
{
    memset(cell, 0, sizeof *cell);
    NMO_RETURN_IF_ERR(nmo_contract_resolve(&cell->spec, ct, op, dt, profile, j, err));
    cell->required = !cell->spec.na && cell->spec.required;
    if (cell->spec.na) {
        cell->verdict = NMO_CELL_NA;
        snprintf(cell->detail, sizeof cell->detail, "%s", cell->spec.reason);
        return NMO_OK;
    }
    const nmo_contract_profile *pr = nmo_contract_profile_at(ct, profile);
    if (!cand || !cand->run) {
        cell->verdict = NMO_CELL_SKIPPED;
        snprintf(cell->detail, sizeof cell->detail, "no candidate: %s",
                 cand && cand->label ? cand->label : "none given for this operator");
        return NMO_OK;
    }
    /* provenance before any verdict: backend and the settings the profile states */
    char why[256] = "";
    nmo_judge_prov pv = {cand->backend, cand->device, cand->tf32, cand->rpr, cand->deterministic,
                         cand->device_name, cand->cublas_ws};
    if (!nmo_judge_prov_ok(pr, &pv, why, sizeof why)) {
        cell->verdict = NMO_CELL_REJECTED;
        snprintf(cell->detail, sizeof cell->detail, "provenance: %s", why);
        return NMO_OK;
    }
    const nmo_contract_op *co = nmo_contract_op_at(ct, op);
    int grad = j == NMO_J_GRAD_ACC || j == NMO_J_GRAD_INV;
    if (j == NMO_J_FWD_ACC || j == NMO_J_GRAD_ACC) return judge_accuracy(cell, co, grad, dt, cand, err);
    return judge_invariance(cell, co, grad, dt, cand, nmo_contract_what(ct), err);
}
