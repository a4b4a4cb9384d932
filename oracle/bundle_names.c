/* numoracle: hipDNN data-type names and operation names of registry operators
 * (RFC 0011 "Naming": the Operation token, "<Operation>Attributes" node types). */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bundle_priv.h"

/* ---- data types --------------------------------------------------------------------- */

static const struct {
    int dt;
    const char *name, *token;
} dt_tab[] = {
    {NMO_FP32, "FLOAT", "fp32"},
    {NMO_FP16, "HALF", "fp16"},
    {NMO_BF16, "BFLOAT16", "bfp16"},
    {NMO_FP64, "DOUBLE", "fp64"},
    {NMO_FP8_E4M3, "FP8_E4M3", "fp8_e4m3"},
    {NMO_FP8_E5M2, "FP8_E5M2", "fp8_e5m2"},
    {NMO_FP8_E4M3FNUZ, "FP8_E4M3_FNUZ", "fp8_e4m3fnuz"},
    {NMO_FP8_E5M2FNUZ, "FP8_E5M2_FNUZ", "fp8_e5m2fnuz"},
    {NMO_DT_INT32, "INT32", "int32"},
    {NMO_DT_INT64, "INT64", "int64"},
};
#define N_DT ((int)(sizeof dt_tab / sizeof dt_tab[0]))

const char *nmo_dt_name(int dt)
{
    for (int i = 0; i < N_DT; i++)
        if (dt_tab[i].dt == dt) return dt_tab[i].name;
    return NULL;
}

const char *nmo_dt_token(int dt)
{
    for (int i = 0; i < N_DT; i++)
        if (dt_tab[i].dt == dt) return dt_tab[i].token;
    return dt == NMO_TF32 ? "tf32" : "unknown";
}

nmo_status nmo_dt_parse(int *dt, const char *name)
{
    if (!name) return NMO_ERR_UNKNOWN_DTYPE;
    for (int i = 0; i < N_DT; i++)
        if (strcasecmp(dt_tab[i].name, name) == 0) {
            *dt = dt_tab[i].dt;
            return NMO_OK;
        }
    return NMO_ERR_UNKNOWN_DTYPE;
}

const char *nmo__dt_known_list(void)
{
    return "FLOAT HALF BFLOAT16 DOUBLE FP8_E4M3 FP8_E5M2 FP8_E4M3_FNUZ FP8_E5M2_FNUZ INT32 INT64";
}

/* ---- operators and operation names -------------------------------------------------- */

int nmo_op_is_backward(const nmo_op *op)
{
    size_t n = strlen(op->name);
    return n > 4 && strcmp(op->name + n - 4, "_bwd") == 0;
}

/* PascalCase of the first len characters of an operator name. */
static size_t pascal(char *buf, size_t n, const char *name, size_t len)
{
    size_t off = 0;
    int up = 1;
    for (size_t i = 0; i < len && off + 1 < n; i++) {
        char ch = name[i];
        if (ch == '_') {
            up = 1;
            continue;
        }
        buf[off++] = up && ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
        up = 0;
    }
    buf[off] = '\0';
    return off;
}

/* RFC 0011's Operation: PascalCase with the direction suffix, the phase after it
 * (batchnorm_inference -> BatchnormFwdInference, rms_norm_bwd -> RmsNormBwd). */
char *nmo_op_operation(char *buf, size_t n, const nmo_op *op)
{
    size_t len = strlen(op->name);
    int bwd = nmo_op_is_backward(op);
    int inf = !bwd && len > 10 && strcmp(op->name + len - 10, "_inference") == 0;
    if (bwd) len -= 4;
    if (inf) len -= 10;
    size_t off = pascal(buf, n, op->name, len);
    snprintf(buf + off, n - off, "%s", bwd ? "Bwd" : inf ? "FwdInference" : "Fwd");
    return buf;
}

/* The name numoracle used before the RFC's spelling (BatchnormInferenceFwd), read as an
 * alias so that older bundles and folders keep loading. */
static char *op_operation_legacy(char *buf, size_t n, const nmo_op *op)
{
    size_t len = strlen(op->name);
    int bwd = nmo_op_is_backward(op);
    size_t off = pascal(buf, n, op->name, bwd ? len - 4 : len);
    snprintf(buf + off, n - off, "%s", bwd ? "Bwd" : "Fwd");
    return buf;
}

const nmo_op *nmo_op_forward(const nmo_op *op)
{
    if (!nmo_op_is_backward(op)) return NULL;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(op->name) - 4), op->name);
    return nmo_op_find(name);
}

/* An operator by its name, Operation ("RmsNormFwd") or node type ("RmsNormFwdAttributes"). */
const nmo_op *nmo__op_lookup(const char *s)
{
    if (!s || !*s) return NULL;
    const nmo_op *op = nmo_op_find(s);
    if (op) return op;
    for (int i = 0; i < nmo_op_count(); i++) {
        char b[160], t[180];
        for (int legacy = 0; legacy < 2; legacy++) {
            if (legacy) op_operation_legacy(b, sizeof b, nmo_op_at(i));
            else nmo_op_operation(b, sizeof b, nmo_op_at(i));
            snprintf(t, sizeof t, "%sAttributes", b);
            if (strcmp(s, b) == 0 || strcmp(s, t) == 0) return nmo_op_at(i);
        }
    }
    return NULL;
}

/* ---- graph JSON --------------------------------------------------------------------- */
