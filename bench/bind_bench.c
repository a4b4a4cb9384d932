/* nmo_bind_bench: the C side of bench/py_overhead.py. Times the check a C test harness
 * makes through the public API (numoracle.h), on tensors read from raw files beforehand:
 * build the case (nmo_case_init_params), copy the inputs in, judge the candidate outputs
 * (nmo_check, default threads) and make the JSON report (nmo_report_json), everything a
 * numoracle.check() call does in C. Reading the files is not timed (the Python side has
 * its arrays in memory too).
 *
 *   nmo_bind_bench OP DTYPE SHAPE REPS IN1.bin ... -- OUT1.bin ...
 *
 * Inputs and outputs in the operator's order, every input given. Prints one line per
 * repetition, "seconds=S cpu=C verdict=V" (wall and process CPU seconds, every thread), and
 * nothing else on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numoracle/numoracle.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what, const nmo_err *err)
{
    fprintf(stderr, "nmo_bind_bench: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 7) return fail("usage: nmo_bind_bench OP DTYPE SHAPE REPS IN.bin... -- OUT.bin...", NULL);
    nmo_err err = {{0}};
    const nmo_op *op = nmo_op_find(argv[1]);
    nmo_fmt dt;
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    int reps = atoi(argv[4]);
    if (!op) return fail("unknown op", NULL);
    if (nmo_fmt_from_name(&dt, argv[2]) != NMO_OK) return fail("unknown dtype", NULL);
    if (nmo_shape_parse(&nshape, shape, argv[3], &err) != NMO_OK) return fail("shape", &err);
    int sep = 5;
    while (sep < argc && strcmp(argv[sep], "--") != 0) sep++;
    if (sep - 5 != op->n_in || argc - sep - 1 != op->n_out) return fail("give every input, --, every output", NULL);

    nmo_plan plan;
    nmo_plan_default(&plan, dt);
    /* the tensors, read once: a case's inputs and the candidate's outputs */
    nmo_case proto;
    if (nmo_case_init(&proto, op, &plan, nshape, shape, &err) != NMO_OK) return fail("case", &err);
    for (int k = 0; k < op->n_in; k++)
        if (nmo_tensor_read_bin(&proto.in[k], argv[5 + k], &err) != NMO_OK) return fail(argv[5 + k], &err);
    nmo_tensor cand[NMO_MAX_TENSORS];
    for (int k = 0; k < op->n_out; k++) {
        cand[k] = proto.out[k];
        cand[k].data = NULL;
        cand[k].own = 0;
        if (nmo_tensor_alloc(&cand[k], &err) != NMO_OK ||
            nmo_tensor_read_bin(&cand[k], argv[sep + 1 + k], &err) != NMO_OK)
            return fail(argv[sep + 1 + k], &err);
    }

    for (int r = 0; r < reps; r++) {
        double t0 = clock_s(CLOCK_MONOTONIC), u0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        nmo_case c;
        if (nmo_case_init_params(&c, op, &plan, nshape, shape, NULL, NULL, &err) != NMO_OK) return fail("case", &err);
        for (int k = 0; k < op->n_in; k++)
            memcpy(c.in[k].data, proto.in[k].data, (size_t)nmo_tensor_span(&c.in[k]) * nmo_fmt_bytes(c.in[k].dtype));
        nmo_check_opts co = {0};
        nmo_report rep;
        if (nmo_check(&rep, &c, cand, &co, &err) != NMO_OK) return fail("check", &err);
        char *js = nmo_report_json(&rep, &c, "given", NULL, 0);
        double t1 = clock_s(CLOCK_MONOTONIC), u1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (!js) return fail("out of memory", NULL);
        printf("seconds=%.6f cpu=%.6f verdict=%s\n", t1 - t0, u1 - u0, nmo_verdict_name(rep.verdict));
        free(js);
        nmo_report_free(&rep);
        nmo_case_free(&c);
    }
    for (int k = 0; k < op->n_out; k++) nmo_tensor_free(&cand[k]);
    nmo_case_free(&proto);
    return 0;
}
