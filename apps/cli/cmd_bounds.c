/* numoracle bounds: the reachable sets of a problem written as raw tensors (lo, hi, flags). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_internal.h" /* nmo__bound_bits */

/* "lo.bin" + "y" -> "lo.y.bin"; no extension: "lo" -> "lo.y". */
static char *suffixed(const char *path, const char *oname)
{
    size_t n = strlen(path) + strlen(oname) + 2;
    char *s = malloc(n);
    if (!s) return NULL;
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (dot && (!slash || dot > slash + 1) && dot != path)
        snprintf(s, n, "%.*s.%s%s", (int)(dot - path), path, oname, dot);
    else snprintf(s, n, "%s.%s", path, oname);
    return s;
}

int cmd_bounds(int argc, char **argv)
{
    cli_opt opts[] = {
        CLI_PROBLEM_OPTS,
        {"lo", "FILE", 1, 0, "write the low ends of R (dtype plan.out)", NULL, {0}, 0},
        {"hi", "FILE", 1, 0, "write the high ends of R (dtype plan.out)", NULL, {0}, 0},
        {"flags", "FILE", 0, 0, "write one uint8 of NMO_BF_* flags per element", NULL, {0}, 0},
        {"json", "FILE", 0, 0, "also write a JSON summary to FILE (atomically)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "bounds",
        .summary = "Write the reachable set R = [lo, hi] of every output element: a value c of\n"
                   "dtype plan.out is one a plan-following kernel can produce iff lo <= c <= hi\n"
                   "(or c is NaN and flags has NAN_OK). Flags per element: 1 NAN_OK (NaN is\n"
                   "possible), 2 NONFINITE (R unbounded: lo/hi are +-inf, +-max in formats\n"
                   "without inf), 4 WIDE (R spans more than max_ulps values), 8 MUST_NAN (every\n"
                   "implementation gives NaN; lo = hi = NaN). Elements flagged 2 or 4 judge\n"
                   "INCONCLUSIVE at best. Ops with several outputs write one file per output,\n"
                   "named by inserting .<output> before the extension (lo.bin -> lo.y.bin).",
        .usage = "bounds --op OP --dtype DT --shape SHAPE --lo FILE --hi FILE [options]",
        .epilog = NULL,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const nmo_op *op;
    if ((rc = cli_resolve_op(&op, cli_val(&cmd, "op")))) return rc;
    nmo_check_opts co = {0};
    co.keep_bounds = 1;
    if ((rc = cli_enclosure(&co, &cmd))) return rc;

    cli_problem pb;
    if ((rc = cli_problem_build(&pb, &cmd))) return rc;
    const nmo_case *c = &pb.c;
    nmo_report rep;
    nmo_err err = {{0}};
    if (nmo_check(&rep, c, NULL, &co, &err) != NMO_OK) {
        cli_problem_free(&pb);
        return cli_error("%s", err.msg);
    }

    const char *plo = cli_val(&cmd, "lo"), *phi = cli_val(&cmd, "hi"),
               *pfl = cli_val(&cmd, "flags"), *pjs = cli_val(&cmd, "json");
    int64_t n_total = 0, n_inf = 0, n_wide = 0, n_nonfin = 0, n_nanok = 0, n_must = 0;
    cli_stage st = {0};
    char files[2048] = "";
    size_t foff = 0;
    cJSON *jfiles = cJSON_CreateObject();
    for (int k = 0; k < c->n_out && !rc; k++) {
        nmo_tensor lo = c->out[k], hi = c->out[k];
        lo.data = hi.data = NULL;
        lo.own = hi.own = 0;
        if (nmo_tensor_alloc(&lo, &err) != NMO_OK || nmo_tensor_alloc(&hi, &err) != NMO_OK) {
            rc = cli_error("%s", err.msg);
            nmo_tensor_free(&lo);
            break;
        }
        int64_t n = nmo_tensor_numel(&c->out[k]);
        for (int64_t i = 0; i < n; i++) {
            nmo_tensor_set_bits(&lo, i, nmo__bound_bits(c->plan.out, rep.rlo[k][i]));
            nmo_tensor_set_bits(&hi, i, nmo__bound_bits(c->plan.out, rep.rhi[k][i]));
            uint8_t f = rep.bflags[k][i];
            n_nanok += (f & NMO_BF_NAN_OK) != 0;
            n_nonfin += (f & NMO_BF_NONFINITE) != 0;
            n_wide += (f & NMO_BF_WIDE) != 0;
            n_must += (f & NMO_BF_MUST_NAN) != 0;
            n_inf += !(f & (NMO_BF_NONFINITE | NMO_BF_WIDE | NMO_BF_MUST_NAN));
        }
        n_total += n;
        size_t bytes = (size_t)n * nmo_fmt_bytes(c->plan.out);
        const char *oname = op->out[k].name;
        char *flo = c->n_out > 1 ? suffixed(plo, oname) : strdup(plo);
        char *fhi = c->n_out > 1 ? suffixed(phi, oname) : strdup(phi);
        char *ffl = pfl ? (c->n_out > 1 ? suffixed(pfl, oname) : strdup(pfl)) : NULL;
        if (!flo || !fhi || (pfl && !ffl)) rc = cli_error("out of memory");
        if (!rc) rc = cli_stage_file(&st, flo, lo.data, bytes);
        if (!rc) rc = cli_stage_file(&st, fhi, hi.data, bytes);
        if (!rc && ffl) rc = cli_stage_file(&st, ffl, rep.bflags[k], (size_t)n);
        if (!rc) {
            foff += (size_t)snprintf(files + foff, foff < sizeof files ? sizeof files - foff : 0,
                                     "%s%s %s%s%s", foff ? " " : "", flo, fhi, ffl ? " " : "",
                                     ffl ? ffl : "");
            cJSON *fo = cJSON_AddObjectToObject(jfiles, oname);
            cJSON_AddStringToObject(fo, "lo", flo);
            cJSON_AddStringToObject(fo, "hi", fhi);
            if (ffl) cJSON_AddStringToObject(fo, "flags", ffl);
        }
        free(flo), free(fhi), free(ffl);
        nmo_tensor_free(&lo);
        nmo_tensor_free(&hi);
    }
    double med = nmo_report_width_quantile(&rep, 0.5);
    if (!rc && pjs) {
        /* the library's report (op, shape, plan, engine, widths) minus the verdict fields,
         * plus the bound counts and the files */
        char *base = nmo_report_json(&rep, c, "", nmo_family_name(pb.family), pb.seed);
        cJSON *o = base ? cJSON_Parse(base) : NULL;
        free(base);
        if (!o) rc = cli_error("out of memory");
        else {
            cJSON_DeleteItemFromObject(o, "candidate");
            cJSON_DeleteItemFromObject(o, "verdict");
            cJSON_DeleteItemFromObject(o, "counts");
            cJSON_DeleteItemFromObject(o, "worst");
            cJSON *b = cJSON_AddObjectToObject(o, "bounds");
            cJSON_AddNumberToObject(b, "elements", (double)n_total);
            cJSON_AddNumberToObject(b, "informative", (double)n_inf);
            cJSON_AddNumberToObject(b, "wide", (double)n_wide);
            cJSON_AddNumberToObject(b, "not_finite", (double)n_nonfin);
            cJSON_AddNumberToObject(b, "nan_possible", (double)n_nanok);
            cJSON_AddNumberToObject(b, "must_nan", (double)n_must);
            cJSON_AddStringToObject(b, "dtype", nmo_fmt_name(c->plan.out));
            cJSON_AddItemToObject(b, "files", jfiles);
            jfiles = NULL;
            char *cl = cli_command_line(argc, argv);
            if (cl) cJSON_AddStringToObject(o, "command", cl);
            free(cl);
            char *js = nmo__json_print(o, 1);
            cJSON_Delete(o);
            if (!js) rc = cli_error("out of memory");
            else rc = cli_stage_file(&st, pjs, js, strlen(js));
            free(js);
        }
    }
    cJSON_Delete(jfiles);
    if (!rc) rc = cli_stage_commit(&st);
    else cli_stage_abort(&st);
    if (!rc) {
        char shape[128];
        cli_shape_text(shape, sizeof shape, c);
        printf("numoracle bounds: op=%s shape=%s out=%s elements=%lld informative=%lld "
               "wide=%lld not_finite=%lld nan_possible=%lld must_nan=%lld "
               "width_ulps_median=%g width_ulps_max=%lld escalated=%lld wrote %s\n",
               op->name, shape, nmo_fmt_name(c->plan.out), (long long)n_total, (long long)n_inf,
               (long long)n_wide, (long long)n_nonfin, (long long)n_nanok, (long long)n_must,
               med, (long long)rep.width_max, (long long)rep.n_escalated, files);
    }
    nmo_report_free(&rep);
    cli_problem_free(&pb);
    return rc;
}
