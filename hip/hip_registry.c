/* numoracle GPU layer: the HIP kernel registry — the per-operator tables exported by
 * hip/kernels/<op>.hip (nmo_hip_kernels_<op>[], nmo_hip_kernels_<op>_n), in the order of
 * the hip_ops list in hip/meson.build. Within an operator, correct kernels come first;
 * the first correct kernel of an operator and dtype is the default of `--candidate hip`. */
#include <stddef.h>

#include "nmo_gpu.h"

#define NMO_HIP_OP(name)                                                                 \
    extern const nmo_plugin_kernel nmo_hip_kernels_##name[];                             \
    extern const int nmo_hip_kernels_##name##_n;
#include "nmo_hip_ops.def"
#undef NMO_HIP_OP

static const struct {
    const nmo_plugin_kernel *k;
    const int *n;
} groups[] = {
#define NMO_HIP_OP(name) {nmo_hip_kernels_##name, &nmo_hip_kernels_##name##_n},
#include "nmo_hip_ops.def"
#undef NMO_HIP_OP
};
#define NGROUPS ((int)(sizeof groups / sizeof groups[0]))

int nmo_hip_kernel_count(void)
{
    int n = 0;
    for (int g = 0; g < NGROUPS; g++) n += *groups[g].n;
    return n;
}

const nmo_plugin_kernel *nmo_hip_kernel_at(int i)
{
    if (i < 0) return NULL;
    for (int g = 0; g < NGROUPS; g++) {
        if (i < *groups[g].n) return &groups[g].k[i];
        i -= *groups[g].n;
    }
    return NULL;
}
