/* Fuzz the bundle loader: input = graph JSON [NUL metadata JSON], loaded as a
 * single-graph bundle (no tensors: graph-only). Every input loads or is refused with a
 * message; nothing crashes, leaks or allocates beyond the documented limits. */
#include "fuzz_common.h"
#include "numoracle/bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[512], g[600], m[600];
    snprintf(dir, sizeof dir, "%s/bundle", fuzz_dir());
    mkdir(dir, 0777);
    snprintf(g, sizeof g, "%s/b.json", dir);
    snprintf(m, sizeof m, "%s/b.meta.json", dir);
    size_t la, lb;
    const uint8_t *b;
    int has_b;
    fuzz_split(data, size, &la, &b, &lb, &has_b);
    fuzz_write(g, data, la);
    if (has_b) fuzz_write(m, b, lb);
    else unlink(m);
    for (unsigned flags = 0; flags < 2; flags++) {
        nmo_bundle bu;
        nmo_err e;
        e.msg[0] = '\0';
        if (nmo_bundle_load(&bu, g, flags ? NMO_BL_GRAPH_ONLY : 0, &e) == NMO_OK) nmo_bundle_free(&bu);
        else if (!e.msg[0]) abort();
    }
    return 0;
}
