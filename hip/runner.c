/* numoracle GPU layer: the runner (see nmo_runner.h). Plain C: device work goes through
 * nmo_gpu.h, plugins through dlopen. Built in every configuration: with -Dgpu=none the
 * HIP registry is empty and device plugins fail with NMO_GPU_NONE_MSG, while host
 * plugins (hip/plugins/example_cpu_plugin.c) run, so CI tests the ABI without a GPU. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "nmo_gpu.h"
#include "nmo_internal.h"
#include "nmo_runner.h"

/* The plugin ABI pins dtype numbers to nmo_fmt. */
_Static_assert(NMO_PLUGIN_DT_FP64 == (int)NMO_FP64 && NMO_PLUGIN_DT_FP32 == (int)NMO_FP32 &&
                   NMO_PLUGIN_DT_TF32 == (int)NMO_TF32 && NMO_PLUGIN_DT_BF16 == (int)NMO_BF16 &&
                   NMO_PLUGIN_DT_FP16 == (int)NMO_FP16 && NMO_PLUGIN_DT_FP8_E4M3 == (int)NMO_FP8_E4M3 &&
                   NMO_PLUGIN_DT_FP8_E5M2 == (int)NMO_FP8_E5M2 &&
                   NMO_PLUGIN_DT_FP8_E4M3FNUZ == (int)NMO_FP8_E4M3FNUZ &&
                   NMO_PLUGIN_DT_FP8_E5M2FNUZ == (int)NMO_FP8_E5M2FNUZ,
               "plugin dtype numbers must equal nmo_fmt");
_Static_assert(NMO_PLUGIN_MAX_DIMS == NMO_MAX_DIMS, "plugin dims must match tensor dims");

/* ------------------------------------------------------------------ plugins */

struct nmo_plugin {
    void *handle;
    const nmo_plugin_info *info;
    char *path;
};

const nmo_plugin_info *nmo_plugin_get_info(const nmo_plugin *pl) { return pl ? pl->info : NULL; }
const char *nmo_plugin_path(const nmo_plugin *pl) { return pl ? pl->path : NULL; }

void nmo_plugin_close(nmo_plugin *pl)
{
    if (!pl) return;
    /* Device plugins may have registered kernels with the GPU runtime; unloading them
     * before process exit is not safe with every runtime: keep the code mapped. */
    if (pl->handle && pl->info && pl->info->memory == NMO_PLUGIN_MEM_HOST) dlclose(pl->handle);
    free(pl->path);
    free(pl);
}

static const nmo_plugin_kernel *info_kernel(const nmo_plugin_info *in, int i)
{
    return (const nmo_plugin_kernel *)((const char *)in->kernels + (size_t)i * in->kernel_size);
}

nmo_status nmo_plugin_open(nmo_plugin **out, const char *path, nmo_err *err)
{
    *out = NULL;
    if (!path || !*path) return nmo_err_set(err, NMO_ERR_USAGE, "plugin: empty path");
    /* a bare file name would make dlopen search the library path: keep it a file path */
    char *p = NULL;
    if (!strchr(path, '/')) {
        size_t n = strlen(path) + 3;
        p = malloc(n);
        if (p) snprintf(p, n, "./%s", path);
    } else {
        p = strdup(path);
    }
    if (!p) return nmo_err_set(err, NMO_ERR_NOMEM, "plugin: out of memory");
    /* load, query and validate it in a child first: a crash or hang in the plugin's
     * constructors or query stays there (plugin_guard.c) */
    char buf[512];
    if (nmo_plugin_probe(p, buf, sizeof buf)) {
        nmo_status s = nmo_err_set(err, NMO_ERR_UNSUPPORTED, "plugin '%s': %s", path, buf);
        free(p);
        return s;
    }
    dlerror();
    void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        nmo_status s = nmo_err_set(err, NMO_ERR_IO, "plugin '%s': %s", path, e ? e : "dlopen failed");
        free(p);
        return s;
    }
    nmo_plugin_query_fn q;
    *(void **)&q = dlsym(h, NMO_PLUGIN_QUERY_SYMBOL);
    const char *why = NULL;
    const nmo_plugin_info *in = NULL;
    if (!q) why = "no symbol " NMO_PLUGIN_QUERY_SYMBOL;
    else if (!(in = nmo_plugin_query_any(q))) why = "the plugin declined numoracle's ABI versions (2 and 1)";
    else if (nmo_plugin_table_check(in, buf, sizeof buf)) why = buf;
    if (why) {
        nmo_status s = nmo_err_set(err, NMO_ERR_UNSUPPORTED, "plugin '%s': %s", path, why);
        dlclose(h);
        free(p);
        return s;
    }
    nmo_plugin *pl = calloc(1, sizeof *pl);
    if (!pl) {
        dlclose(h);
        free(p);
        return nmo_err_set(err, NMO_ERR_NOMEM, "plugin: out of memory");
    }
    pl->handle = h;
    pl->info = in;
    pl->path = p;
    *out = pl;
    return NMO_OK;
}

int nmo_plugin_is_expected(const char *path, const char *const *paths, int n)
{
    for (int i = 0; i < n; i++)
        if (paths[i] && strcmp(paths[i], path) == 0) return 1;
    const char *env = getenv("NMO_EXPECT_PLUGINS");
    if (!env || !*env) return 0;
    size_t pl = strlen(path);
    for (const char *s = env; *s;) {
        const char *c = strchr(s, ':');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == pl && strncmp(s, path, len) == 0) return 1;
        if (!c) break;
        s = c + 1;
    }
    return 0;
}

static nmo_status check_one(const char *path, nmo_err *err)
{
    nmo_plugin *pl = NULL;
    nmo_err e = {{0}};
    if (nmo_plugin_open(&pl, path, &e) != NMO_OK)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "expected plugin '%s' failed to load: %s", path,
                           e.msg);
    nmo_plugin_close(pl);
    return NMO_OK;
}

nmo_status nmo_plugin_check_expected(const char *const *paths, int n, nmo_err *err)
{
    for (int i = 0; i < n; i++)
        if (paths[i] && *paths[i]) NMO_RETURN_IF_ERR(check_one(paths[i], err));
    const char *env = getenv("NMO_EXPECT_PLUGINS");
    if (!env || !*env) return NMO_OK;
    char *list = strdup(env);
    if (!list) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    nmo_status s = NMO_OK;
    for (char *tok = list; tok && s == NMO_OK;) {
        char *c = strchr(tok, ':');
        if (c) *c = '\0';
        if (*tok) s = check_one(tok, err);
        tok = c ? c + 1 : NULL;
    }
    free(list);
    return s;
}

/* ------------------------------------------------------------------ kernel sets */

void nmo_kernel_set_hip(nmo_kernel_set *s)
{
    s->label = "hip";
    s->memory = NMO_PLUGIN_MEM_DEVICE;
    s->plugin = NULL;
}

void nmo_kernel_set_plugin(nmo_kernel_set *s, const nmo_plugin *pl)
{
    s->label = "plugin";
    s->memory = pl->info->memory;
    s->plugin = pl;
}

int nmo_kernel_set_count(const nmo_kernel_set *s)
{
    return s->plugin ? s->plugin->info->n_kernels : nmo_hip_kernel_count();
}

static void desc_tensor(nmo_plugin_tensor *d, const nmo_tensor *t, void *data);

const nmo_plugin_info *nmo_plugin_query_any(nmo_plugin_query_fn q)
{
    const nmo_plugin_info *in = q(NMO_PLUGIN_ABI_VERSION);
    for (uint32_t v = NMO_PLUGIN_ABI_VERSION; !in && v-- > NMO_PLUGIN_ABI_VERSION_MIN;) in = q(v);
    return in;
}

int nmo_kernel_geometry(const nmo_kernel_set *s, const nmo_plugin_kernel *k, const nmo_case *c, char *text,
                        size_t len)
{
    /* a version-1 table has no geometry field: do not read past its kernel_size */
    if (s->plugin && (s->plugin->info->abi_version < 2 || s->plugin->info->kernel_size < sizeof(nmo_plugin_kernel)))
        return 0;
    if (!k->geometry || len == 0) return 0;
    nmo_plugin_tensor tin[NMO_MAX_TENSORS], tout[NMO_MAX_TENSORS];
    for (int i = 0; i < c->n_in; i++) desc_tensor(&tin[i], &c->in[i], NULL);
    for (int i = 0; i < c->n_out; i++) desc_tensor(&tout[i], &c->out[i], NULL);
    char plan[512];
    nmo_plan_to_string(&c->plan, plan, sizeof plan);
    nmo_plugin_args a = {.struct_size = (uint32_t)sizeof a, .abi_version = NMO_PLUGIN_ABI_VERSION,
                         .op = c->op->name, .n_in = c->n_in, .n_out = c->n_out, .n_param = c->op->n_param,
                         .in = tin, .out = tout, .param = c->param, .plan = plan, .stream = NULL};
    text[0] = 0;
    int r = k->geometry(&a, text, len);
    text[len - 1] = 0;
    return r == 1 && text[0];
}

const nmo_plugin_kernel *nmo_kernel_set_at(const nmo_kernel_set *s, int i)
{
    if (i < 0 || i >= nmo_kernel_set_count(s)) return NULL;
    return s->plugin ? info_kernel(s->plugin->info, i) : nmo_hip_kernel_at(i);
}

int nmo_kernel_claims_dtype(const nmo_plugin_kernel *k, nmo_fmt in, nmo_fmt out)
{
    const char *s = k->dtypes;
    while (s && *s) {
        while (*s == ' ' || *s == ',') s++;
        const char *e = s;
        while (*e && *e != ' ' && *e != ',') e++;
        if (e > s) {
            char tok[64];
            size_t n = (size_t)(e - s) < sizeof tok - 1 ? (size_t)(e - s) : sizeof tok - 1;
            memcpy(tok, s, n);
            tok[n] = '\0';
            char *gt = strchr(tok, '>');
            nmo_fmt a, b;
            if (gt) {
                *gt = '\0';
                if (nmo_fmt_from_name(&a, tok) == NMO_OK && nmo_fmt_from_name(&b, gt + 1) == NMO_OK &&
                    a == in && b == out)
                    return 1;
            } else if (nmo_fmt_from_name(&a, tok) == NMO_OK && a == in && a == out) {
                return 1;
            }
        }
        s = e;
    }
    return 0;
}

static void dtype_pair(char *buf, size_t n, nmo_fmt in, nmo_fmt out)
{
    if (in == out) snprintf(buf, n, "%s", nmo_fmt_name(in));
    else snprintf(buf, n, "%s>%s", nmo_fmt_name(in), nmo_fmt_name(out));
}

int nmo_kernel_select(const nmo_plugin_kernel **kp, const nmo_kernel_set *s, const char *op,
                      nmo_fmt in, nmo_fmt out, const char *name, char *why, size_t whylen)
{
    *kp = NULL;
    char dt[64];
    dtype_pair(dt, sizeof dt, in, out);
    const int n = nmo_kernel_set_count(s);
    const char *label = s->plugin ? "the plugin" : "the HIP registry";
    if (name && *name) {
        const nmo_plugin_kernel *other = NULL;
        for (int i = 0; i < n; i++) {
            const nmo_plugin_kernel *k = nmo_kernel_set_at(s, i);
            if (strcmp(k->name, name) != 0) continue;
            if (strcmp(k->op, op) != 0) {
                if (!other) other = k;
                continue;
            }
            if (!nmo_kernel_claims_dtype(k, in, out)) {
                snprintf(why, whylen, "kernel %s of %s has no dtype %s (dtypes: %s)", name, label, dt,
                         k->dtypes);
                return 1;
            }
            *kp = k;
            return 0;
        }
        if (other && s->plugin) {
            snprintf(why, whylen, "kernel %s of %s implements %s, not %s", name, label, other->op, op);
            return 1;
        }
        snprintf(why, whylen, "%s has no kernel %s for op %s", label, name, op);
        return -1;
    }
    int any_op = 0;
    for (int i = 0; i < n; i++) {
        const nmo_plugin_kernel *k = nmo_kernel_set_at(s, i);
        if (strcmp(k->op, op) != 0) continue;
        any_op = 1;
        if (k->correct && nmo_kernel_claims_dtype(k, in, out)) {
            *kp = k;
            return 0;
        }
    }
    if (any_op) snprintf(why, whylen, "%s has no correct kernel of op %s for dtype %s", label, op, dt);
    else snprintf(why, whylen, "%s has no kernel for op %s", label, op);
    return 1;
}

/* ------------------------------------------------------------------ staging */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void desc_tensor(nmo_plugin_tensor *d, const nmo_tensor *t, void *data)
{
    memset(d, 0, sizeof *d);
    d->data = data;
    d->dtype = (int32_t)t->dtype;
    d->ndims = t->ndims;
    for (int i = 0; i < t->ndims; i++) {
        d->dims[i] = t->dims[i];
        d->strides[i] = t->strides[i];
    }
}

static size_t tensor_bytes(const nmo_tensor *t)
{
    return (size_t)nmo_tensor_span(t) * nmo_fmt_bytes(t->dtype);
}

void nmo_staged_free(nmo_staged *s)
{
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        if (s->memory == NMO_PLUGIN_MEM_DEVICE) {
            nmo_gpu_free(s->buf_in[k]);
            nmo_gpu_free(s->buf_out[k]);
        }
        free(s->host_out[k]);
        s->buf_in[k] = s->buf_out[k] = s->host_out[k] = NULL;
    }
}

nmo_status nmo_stage_case(nmo_staged *s, const nmo_case *c, int memory, nmo_err *err)
{
    memset(s, 0, sizeof *s);
    s->memory = memory;
    s->c = c;
    nmo_plan_to_string(&c->plan, s->plan_text, sizeof s->plan_text);
    nmo_status st = NMO_OK;
    if (memory == NMO_PLUGIN_MEM_DEVICE) {
        if ((st = nmo_gpu_init(err)) != NMO_OK) return st;
        for (int k = 0; k < c->n_in && st == NMO_OK; k++) {
            s->bytes_in[k] = tensor_bytes(&c->in[k]);
            st = nmo_gpu_alloc(&s->buf_in[k], s->bytes_in[k], err);
            if (st == NMO_OK) st = nmo_gpu_h2d(s->buf_in[k], c->in[k].data, s->bytes_in[k], err);
            desc_tensor(&s->tin[k], &c->in[k], s->buf_in[k]);
        }
        for (int k = 0; k < c->n_out && st == NMO_OK; k++) {
            s->bytes_out[k] = tensor_bytes(&c->out[k]);
            st = nmo_gpu_alloc(&s->buf_out[k], s->bytes_out[k], err);
            desc_tensor(&s->tout[k], &c->out[k], s->buf_out[k]);
        }
    } else {
        for (int k = 0; k < c->n_in; k++) desc_tensor(&s->tin[k], &c->in[k], c->in[k].data);
        for (int k = 0; k < c->n_out && st == NMO_OK; k++) {
            s->bytes_out[k] = tensor_bytes(&c->out[k]);
            s->host_out[k] = malloc(s->bytes_out[k] ? s->bytes_out[k] : 1);
            if (!s->host_out[k]) st = nmo_err_set(err, NMO_ERR_NOMEM, "runner: out of memory");
            desc_tensor(&s->tout[k], &c->out[k], s->host_out[k]);
        }
    }
    if (st != NMO_OK) {
        nmo_staged_free(s);
        return st;
    }
    nmo_plugin_args *a = &s->args;
    a->struct_size = (uint32_t)sizeof *a;
    a->abi_version = NMO_PLUGIN_ABI_VERSION;
    a->op = c->op->name;
    a->n_in = c->n_in;
    a->n_out = c->n_out;
    a->n_param = c->op->n_param;
    a->in = s->tin;
    a->out = s->tout;
    a->param = c->param;
    a->plan = s->plan_text;
    a->stream = memory == NMO_PLUGIN_MEM_DEVICE ? nmo_gpu_stream() : NULL;
    return NMO_OK;
}

nmo_status nmo_staged_launch(nmo_staged *s, const nmo_plugin_kernel *k, nmo_run_info *info,
                             nmo_err *err)
{
    info->skipped = 0;
    info->why[0] = '\0';
    info->kernel_ms = 0.0;
    /* host kernels run in a child process (plugin_guard.c): a crash, overrun or hang is
     * this case's error; device kernels stay here (a GPU context does not survive fork) */
    if (s->memory == NMO_PLUGIN_MEM_HOST) return nmo__host_launch(s, k, info, err);
    if (k->supports && !k->supports(&s->args)) {
        info->skipped = 1;
        snprintf(info->why, sizeof info->why,
                 "kernel %s does not support this case (shape, strides or parameters)", k->name);
        return NMO_OK;
    }
    /* poison every output right before the launch: unwritten elements read as NaN */
    for (int o = 0; o < s->args.n_out; o++) {
        if (s->memory == NMO_PLUGIN_MEM_DEVICE)
            NMO_RETURN_IF_ERR(nmo_gpu_poison(s->buf_out[o], s->bytes_out[o], err));
        else
            memset(s->host_out[o], 0xFF, s->bytes_out[o]);
    }
    char msg[512] = "";
    int rc;
    if (s->memory == NMO_PLUGIN_MEM_DEVICE) {
        NMO_RETURN_IF_ERR(nmo_gpu_sync_check("before launch", err));
        NMO_RETURN_IF_ERR(nmo_gpu_timer_start(err));
        rc = k->launch(&s->args, msg, sizeof msg);
        if (rc == NMO_PLUGIN_OK) {
            char what[300];
            snprintf(what, sizeof what, "kernel %s", k->name);
            NMO_RETURN_IF_ERR(nmo_gpu_sync_check(what, err));
            NMO_RETURN_IF_ERR(nmo_gpu_timer_stop(&info->kernel_ms, err));
        } else {
            nmo_err e2 = {{0}};
            (void)nmo_gpu_sync_check("after a failed launch", &e2);
        }
    } else {
        double t0 = now_ms();
        rc = k->launch(&s->args, msg, sizeof msg);
        info->kernel_ms = now_ms() - t0;
    }
    msg[sizeof msg - 1] = '\0';
    if (rc == NMO_PLUGIN_UNSUPPORTED) {
        info->skipped = 1;
        snprintf(info->why, sizeof info->why, "kernel %s declined this case%s%s", k->name,
                 msg[0] ? ": " : "", msg);
        return NMO_OK;
    }
    if (rc != NMO_PLUGIN_OK)
        return nmo_err_set(err, NMO_ERR_GENERIC, "kernel %s failed: %s", k->name,
                           msg[0] ? msg : "(no message)");
    return NMO_OK;
}

nmo_status nmo_staged_fetch(nmo_tensor *out, const nmo_staged *s, nmo_err *err)
{
    const nmo_case *c = s->c;
    NMO_RETURN_IF_ERR(nmo_case_alloc_outputs(c, out, 0, err));
    for (int k = 0; k < c->n_out; k++) {
        nmo_status st = NMO_OK;
        if (s->memory == NMO_PLUGIN_MEM_DEVICE)
            st = nmo_gpu_d2h(out[k].data, s->buf_out[k], s->bytes_out[k], err);
        else
            memcpy(out[k].data, s->host_out[k], s->bytes_out[k]);
        if (st != NMO_OK) {
            nmo_case_free_outputs(c, out);
            return st;
        }
    }
    return NMO_OK;
}

/* ------------------------------------------------------------------ provenance */

static cJSON *parse_or_string(const char *text)
{
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    if (j) return j;
    return text ? cJSON_CreateString(text) : cJSON_CreateNull();
}

static char *run_provenance(const nmo_plugin_kernel *k, const nmo_kernel_set *s,
                            const nmo_run_info *info)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "runner", s->plugin ? "plugin" : "hip");
    cJSON *kj = cJSON_AddObjectToObject(o, "kernel");
    cJSON_AddStringToObject(kj, "name", k->name);
    cJSON_AddStringToObject(kj, "op", k->op);
    cJSON_AddBoolToObject(kj, "correct", k->correct != 0);
    cJSON_AddStringToObject(kj, "plan", k->plan ? k->plan : "");
    cJSON_AddStringToObject(kj, "dtypes", k->dtypes);
    if (k->desc) cJSON_AddStringToObject(kj, "desc", k->desc);
    cJSON_AddStringToObject(o, "memory", s->memory == NMO_PLUGIN_MEM_DEVICE ? "device" : "host");
    cJSON_AddBoolToObject(o, "outputs_poisoned", 1);
    cJSON_AddNumberToObject(o, "kernel_ms", info->kernel_ms);
    if (s->memory == NMO_PLUGIN_MEM_DEVICE)
        cJSON_AddItemToObject(o, "gpu", parse_or_string(nmo_gpu_provenance_json()));
    if (s->plugin) {
        const nmo_plugin_info *in = s->plugin->info;
        cJSON *pj = cJSON_AddObjectToObject(o, "plugin");
        cJSON_AddStringToObject(pj, "path", s->plugin->path);
        cJSON_AddStringToObject(pj, "name", in->name ? in->name : "");
        cJSON_AddStringToObject(pj, "version", in->version ? in->version : "");
        cJSON_AddNumberToObject(pj, "abi_version", in->abi_version);
        if (in->provenance_json) cJSON_AddItemToObject(pj, "provenance", parse_or_string(in->provenance_json));
    }
    char *txt = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return txt;
}

nmo_status nmo_run_kernel(nmo_tensor *out, nmo_run_info *info, const nmo_plugin_kernel *k,
                          const nmo_kernel_set *s, const nmo_case *c, nmo_err *err)
{
    memset(info, 0, sizeof *info);
    nmo_staged st;
    NMO_RETURN_IF_ERR(nmo_stage_case(&st, c, s->memory, err));
    nmo_status r = nmo_staged_launch(&st, k, info, err);
    if (r == NMO_OK && !info->skipped) r = nmo_staged_fetch(out, &st, err);
    nmo_staged_free(&st);
    if (r == NMO_OK) info->provenance_json = run_provenance(k, s, info);
    return r;
}

nmo_status nmo_run_kernel_staged(nmo_staged *st, nmo_tensor *out, int *on_device, nmo_run_info *info,
                                 const nmo_plugin_kernel *k, const nmo_kernel_set *s, const nmo_case *c,
                                 nmo_err *err)
{
    memset(info, 0, sizeof *info);
    *on_device = 0;
    NMO_RETURN_IF_ERR(nmo_stage_case(st, c, s->memory, err));
    nmo_status r = nmo_staged_launch(st, k, info, err);
    if (r == NMO_OK && !info->skipped) {
        if (s->memory == NMO_PLUGIN_MEM_DEVICE) *on_device = 1;
        else r = nmo_staged_fetch(out, st, err);
    }
    if (r == NMO_OK) info->provenance_json = run_provenance(k, s, info);
    if (r != NMO_OK) nmo_staged_free(st);
    return r;
}
