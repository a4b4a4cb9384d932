/* Fuzz the plugin-table validation (hip/plugin_guard.c, issue 16.10): a capability table
 * built from the input (header fields, kernels, strings cut from the input at its NUL
 * bytes) is accepted or refused with a reason, never read out of bounds. Sizes and
 * counts beyond numoracle's limits are handed over with a table that does not have them:
 * the check must refuse them before it reads the kernels (ASan catches a read). */
#include "fuzz_common.h"
#include "nmo_runner.h"

static int dummy_launch(const nmo_plugin_args *a, char *m, size_t n)
{
    (void)a, (void)m, (void)n;
    return 0;
}

static uint32_t take32(const uint8_t **p, size_t *n)
{
    uint32_t v = 0;
    for (int i = 0; i < 4 && *n; i++, (*p)++, (*n)--) v |= (uint32_t)**p << (8 * i);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t flags = take32(&data, &size), sz = take32(&data, &size), nk = take32(&data, &size);
    char *text = malloc(size + 1); /* the strings: the rest, cut at NUL bytes */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *strs[64];
    int ns = 0;
    for (size_t i = 0; i <= size && ns < 64;) {
        strs[ns++] = text + i;
        i += strlen(text + i) + 1;
    }
    int si = 0;
#define STR(bit) ((flags >> (bit)) & 1 ? NULL : strs[si++ % ns])
    int n = (int)(nk % 17); /* kernels really there */
    size_t stride = sizeof(nmo_plugin_kernel) + (sz % 9) * 8;
    char *tab = calloc((size_t)n + 1, stride);
    if (!tab) {
        free(text);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        nmo_plugin_kernel *k = (nmo_plugin_kernel *)(tab + (size_t)i * stride);
        uint32_t f = flags >> (i % 8);
        k->op = (f & 1) ? "rms_norm" : STR(2);
        k->name = STR(3);
        k->dtypes = (f & 2) ? "fp32 bf16>fp32" : STR(4);
        k->plan = STR(5);
        k->desc = STR(6);
        k->correct = (int32_t)((f >> 8) % 3);
        k->launch = (f & 4) ? NULL : dummy_launch;
    }
    nmo_plugin_info in = {0};
    in.abi_version = (flags & (1u << 20)) ? flags >> 24 : NMO_PLUGIN_ABI_VERSION;
    in.struct_size = (flags & (1u << 21)) ? sz : (uint32_t)sizeof in;
    /* a claimed stride or count beyond the limits is handed over as it is (it must be
     * refused unread); within the limits the fields tell the truth */
    in.kernel_size = sz > NMO_PLUGIN_MAX_STRUCT ? sz : (uint32_t)stride;
    in.n_kernels = nk > (uint32_t)NMO_PLUGIN_MAX_KERNELS && (flags & (1u << 22)) ? (int32_t)nk : n;
    in.memory = (int32_t)((flags >> 12) % 3);
    in.name = STR(7);
    in.version = STR(8);
    in.provenance_json = STR(9);
    in.kernels = (flags & (1u << 23)) && n == 0 ? NULL : (const nmo_plugin_kernel *)tab;
    char why[512];
    why[0] = '\0';
    if (nmo_plugin_table_check(&in, why, sizeof why) && !why[0]) abort(); /* a refusal says why */
    free(tab);
    free(text);
    return 0;
}
