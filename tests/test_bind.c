/* The binding entry point (numoracle/bind.h) from C: a check by named buffers agrees with
 * nmo_check on the same case, errors carry their status and message, gen is
 * nmo_case_fill, listings parse, and checks from several threads at once give the
 * reports one thread gives. (The Python suite drives the same calls through ctypes.) */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "numoracle/numoracle.h"

/* rms_norm bf16 M x N from the gaussian family, and the candidate warp32's output. */
typedef struct {
    nmo_case c;
    nmo_tensor y;
    int64_t xd[2], wd[1];
} fixture;

static void fixture_init(fixture *f, int64_t M, int64_t N)
{
    nmo_err err;
    nmo_plan plan;
    nmo_plan_default(&plan, NMO_BF16);
    int64_t shape[2] = {M, N};
    cr_assert_eq(nmo_case_init(&f->c, nmo_op_find("rms_norm"), &plan, 2, shape, &err), NMO_OK);
    nmo_case_fill(&f->c, NMO_FAM_GAUSSIAN, 7);
    f->y = f->c.out[0];
    f->y.data = NULL;
    cr_assert_eq(nmo_tensor_alloc(&f->y, &err), NMO_OK);
    nmo_cand_args a = {f->c.in, f->c.n_in, &f->y, 1, f->c.param, f->c.op->n_param, &f->c.plan};
    cr_assert_eq(nmo_cand_find("rms_norm", NULL)->run(&a, &err), NMO_OK);
    f->xd[0] = M, f->xd[1] = N, f->wd[0] = N;
}

static void fixture_free(fixture *f)
{
    nmo_tensor_free(&f->y);
    nmo_case_free(&f->c);
}

static nmo_bind_result *check_named(const fixture *f, const void *y, unsigned flags, const char *engine)
{
    nmo_bind_tensor in[2] = {{"w", "bf16", 1, f->wd, f->c.in[1].data}, {"x", "bfloat16", 2, f->xd, f->c.in[0].data}};
    nmo_bind_tensor out[1] = {{"y", "bf16", 2, f->xd, y}};
    nmo_bind_req q = {.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 2, .in = in, .n_out = 1,
                      .out = out, .flags = flags, .engine = engine};
    return nmo_bind_check(&q);
}

static cJSON *json_of(const nmo_bind_result *r)
{
    cr_assert_eq(nmo_bind_status(r), NMO_OK, "%s", nmo_bind_message(r));
    cJSON *o = cJSON_Parse(nmo_bind_json(r));
    cr_assert(o);
    return o;
}

static double num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(o, a);
    if (b) v = cJSON_GetObjectItem(v, b);
    cr_assert(cJSON_IsNumber(v), "%s.%s", a, b ? b : "");
    return v->valuedouble;
}

Test(bind, version) { cr_assert_eq(nmo_bind_api_version(), NMO_API_VERSION); }

Test(bind, check_agrees_with_nmo_check)
{
    fixture f;
    fixture_init(&f, 16, 513);
    uint16_t *y = malloc((size_t)16 * 513 * 2);
    memcpy(y, f.y.data, (size_t)16 * 513 * 2);
    y[5 * 513 + 7] ^= 0x0004; /* a FAIL */
    nmo_tensor cand = f.y;
    cand.data = y;
    nmo_report rep;
    nmo_err err;
    nmo_check_opts co = {.keep_verdicts = 1};
    cr_assert_eq(nmo_check(&rep, &f.c, &cand, &co, &err), NMO_OK);

    nmo_bind_result *r = check_named(&f, y, NMO_BIND_VERDICTS | NMO_BIND_BOUNDS, NULL);
    cJSON *o = json_of(r);
    cr_assert_eq(nmo_bind_verdict(r), (int)rep.verdict);
    cr_assert_eq(rep.verdict, NMO_FAIL);
    cr_assert_eq((int64_t)num(o, "counts", "fail"), rep.n_fail);
    cr_assert_eq((int64_t)num(o, "counts", "pass"), rep.n_pass);
    cr_assert_eq((int64_t)num(o, "worst", "index"), rep.worst.index);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "shape")), 2);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(o, "dtype")), "bf16");
    int64_t n;
    const uint8_t *v = nmo_bind_array(r, NMO_BIND_A_VERDICTS, 0, &n);
    cr_assert(v && n == 16 * 513);
    cr_assert_eq(memcmp(v, rep.verdicts[0], (size_t)n), 0);
    const double *lo = nmo_bind_array(r, NMO_BIND_A_RLO, 0, &n), *hi = nmo_bind_array(r, NMO_BIND_A_RHI, 0, &n);
    const uint16_t *lob = nmo_bind_array(r, NMO_BIND_A_LO_BITS, 0, &n);
    cr_assert(lo && hi && lob);
    for (int64_t i = 0; i < n; i++) {
        double c = nmo_tensor_get(&cand, i);
        cr_assert_eq(v[i] == NMO_FAIL, !(lo[i] <= c && c <= hi[i]), "element %lld", (long long)i);
        cr_assert_eq(nmo_fmt_decode(NMO_BF16, lob[i]), lo[i]);
    }
    cr_assert_null(nmo_bind_array(r, 99, 0, &n));
    cr_assert_null(nmo_bind_array(r, NMO_BIND_A_RLO, 1, &n));
    nmo_bind_tensor t;
    cr_assert_eq(nmo_bind_count(r), 1);
    cr_assert_eq(nmo_bind_tensor_at(r, 0, &t), 0);
    cr_assert_str_eq(t.name, "y");
    cr_assert(t.ndims == 2 && t.dims[1] == 513 && t.data == NULL);
    cr_assert_eq(nmo_bind_tensor_at(r, 1, &t), -1);
    cJSON_Delete(o);
    nmo_bind_free(r);
    nmo_report_free(&rep);
    free(y);
    fixture_free(&f);
}

Test(bind, errors_carry_status_and_message)
{
    fixture f;
    fixture_init(&f, 4, 64);
    int64_t bad[1] = {63};
    nmo_bind_tensor in[2] = {{"x", "bf16", 2, f.xd, f.c.in[0].data}, {"w", "bf16", 1, bad, f.c.in[1].data}};
    nmo_bind_tensor good[2] = {{"x", "bf16", 2, f.xd, f.c.in[0].data}, {"w", "bf16", 1, f.wd, f.c.in[1].data}};
    nmo_bind_tensor out[1] = {{"y", "bf16", 2, f.xd, f.y.data}};
    struct {
        nmo_bind_req q;
        int status;
        const char *msg;
    } cases[] = {
        {{.api_version = NMO_API_VERSION + 1, .op = "rms_norm"}, NMO_ERR_USAGE, "binding API version"},
        {{.api_version = NMO_API_VERSION, .op = "nope", .n_in = 2, .in = in}, NMO_ERR_UNKNOWN_OP,
         "unknown op 'nope' (see numoracle ops)"},
        {{.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 2, .in = in, .n_out = 1, .out = out},
         NMO_ERR_SHAPE, "input w: dims [63], but op rms_norm at shape 4x64"},
        {{.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 1, .in = in, .n_out = 1, .out = out},
         NMO_ERR_USAGE, "input w of op rms_norm not given"},
        {{.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 2, .in = good, .n_out = 1, .out = out,
          .dtype = "fp32"},
         NMO_ERR_USAGE, "input x: dtype bf16, but op rms_norm under this plan takes fp32"},
        {{.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 2, .in = good, .plan = "acc=bogus"},
         NMO_ERR_PARSE, "acc"},
        {{.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 2, .in = good, .n_out = 1, .out = out,
          .engine = "warp"},
         NMO_ERR_USAGE, "bad engine 'warp': expected auto or certified"},
        {{.api_version = NMO_API_VERSION, .op = "rms_norm", .n_in = 2, .in = good, .n_out = 1, .out = out,
          .n_param = 1, .param_names = (const char *const[]){"epsilon"}, .param_values = (const double[]){1e-5}},
         NMO_ERR_USAGE, "unknown param 'epsilon' for op rms_norm (params: eps offset)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nmo_bind_result *r = nmo_bind_check(&cases[i].q);
        cr_assert_eq(nmo_bind_status(r), cases[i].status, "case %zu: %s", i, nmo_bind_message(r));
        cr_assert(strstr(nmo_bind_message(r), cases[i].msg), "case %zu: %s", i, nmo_bind_message(r));
        cr_assert_null(nmo_bind_json(r));
        cr_assert_eq(nmo_bind_verdict(r), -1);
        cr_assert_eq(nmo_bind_count(r), 0);
        nmo_bind_free(r);
    }
    nmo_bind_free(NULL);
    cr_assert_eq(nmo_bind_status(NULL), NMO_ERR_NOMEM);
    fixture_free(&f);
}

Test(bind, gen_is_case_fill)
{
    fixture f;
    fixture_init(&f, 3, 40);
    int64_t shape[2] = {3, 40};
    nmo_bind_req q = {.api_version = NMO_API_VERSION, .op = "rms_norm", .dtype = "bf16", .nshape = 2,
                      .shape = shape, .family = "gaussian", .seed = 7};
    nmo_bind_result *r = nmo_bind_gen(&q);
    cr_assert_eq(nmo_bind_status(r), NMO_OK, "%s", nmo_bind_message(r));
    cr_assert_eq(nmo_bind_count(r), 2);
    for (int k = 0; k < 2; k++) {
        nmo_bind_tensor t;
        cr_assert_eq(nmo_bind_tensor_at(r, k, &t), 0);
        cr_assert_str_eq(t.name, f.c.op->in[k].name);
        cr_assert_str_eq(t.dtype, "bf16");
        cr_assert_eq(memcmp(t.data, f.c.in[k].data, (size_t)nmo_tensor_numel(&f.c.in[k]) * 2), 0);
    }
    nmo_bind_free(r);
    q.family = "lognormal";
    r = nmo_bind_gen(&q);
    cr_assert_eq(nmo_bind_status(r), NMO_ERR_UNKNOWN_FAMILY);
    nmo_bind_free(r);
    fixture_free(&f);
}

Test(bind, listings)
{
    const char *what[3] = {"ops", "candidates", "plans"};
    for (int i = 0; i < 3; i++) {
        nmo_bind_result *r = nmo_bind_list(what[i], "softmax", "fp16");
        cJSON *o = json_of(r);
        cr_assert(cJSON_IsArray(o) && cJSON_GetArraySize(o) > 0, "%s", what[i]);
        cJSON_Delete(o);
        nmo_bind_free(r);
    }
    nmo_bind_result *r = nmo_bind_list("ops", NULL, NULL);
    cJSON *o = json_of(r);
    cr_assert_eq(cJSON_GetArraySize(o), nmo_op_count());
    cJSON_Delete(o);
    nmo_bind_free(r);
    r = nmo_bind_list("mutants", NULL, NULL);
    cr_assert_eq(nmo_bind_status(r), NMO_ERR_USAGE);
    nmo_bind_free(r);
    r = nmo_bind_list("candidates", "nope", NULL);
    cr_assert_eq(nmo_bind_status(r), NMO_ERR_UNKNOWN_OP);
    nmo_bind_free(r);
}

/* ---- several threads at once ------------------------------------------------------- */

typedef struct {
    const fixture *f;
    const void *y;
    const char *engine;
    char *json;
    uint8_t *verd;
} job;

static char *stable_json(const nmo_bind_result *r)
{
    cJSON *o = cJSON_Parse(nmo_bind_json(r));
    cJSON_DeleteItemFromObject(o, "seconds"); /* the only field that differs between runs */
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void *run_job(void *arg)
{
    job *j = arg;
    nmo_bind_result *r = check_named(j->f, j->y, NMO_BIND_VERDICTS, j->engine);
    if (nmo_bind_status(r) == NMO_OK) {
        int64_t n;
        const uint8_t *v = nmo_bind_array(r, NMO_BIND_A_VERDICTS, 0, &n);
        j->json = stable_json(r);
        j->verd = malloc((size_t)n);
        memcpy(j->verd, v, (size_t)n);
    }
    nmo_bind_free(r);
    return NULL;
}

Test(bind, threads_give_the_serial_reports, .timeout = 600)
{
    fixture f;
    fixture_init(&f, 24, 300);
    size_t n = (size_t)24 * 300;
    uint16_t *y = malloc(n * 2);
    memcpy(y, f.y.data, n * 2);
    for (size_t i = 0; i < n; i += 97) y[i] ^= 0x0001;
    const char *engines[2] = {"auto", "certified"};
    job serial[2], par[4];
    for (int e = 0; e < 2; e++) {
        serial[e] = (job){&f, y, engines[e], NULL, NULL};
        run_job(&serial[e]);
        cr_assert(serial[e].json);
    }
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        par[t] = (job){&f, y, engines[t % 2], NULL, NULL};
        cr_assert_eq(pthread_create(&th[t], NULL, run_job, &par[t]), 0);
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++) {
        const job *s = &serial[t % 2];
        cr_assert(par[t].json, "thread %d", t);
        /* the engine mode differs between the two serial reports; each thread's report is its own */
        cr_assert_str_eq(par[t].json, s->json, "thread %d", t);
        cr_assert_eq(memcmp(par[t].verd, s->verd, n), 0, "thread %d", t);
        free(par[t].json), free(par[t].verd);
    }
    for (int e = 0; e < 2; e++) free(serial[e].json), free(serial[e].verd);
    free(y);
    fixture_free(&f);
}
