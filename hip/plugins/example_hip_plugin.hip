/* numoracle: an example plugin with DEVICE kernels, built from the hip/kernels objects
 * (-Dgpu=cuda|hip only). It shows what a kernel library does to be checked by numoracle
 * without changing numoracle: export nmo_plugin_query returning a capability table whose
 * launch functions take device pointers and a stream.
 *
 *   numoracle check --op rms_norm --dtype bf16 --shape 4096x4096 \
 *       --candidate plugin:build-gpu/hip/plugins/libnmo_example_hip_plugin.so        PASS
 *   ... :mut_w_off1 FAIL;  --op softmax --dtype fp16 SKIPPED (the table says bf16/fp32)
 *
 * The table copies a few entries of the registry and narrows their dtypes. */
#include <string.h>

#include "nmo_hip.h"
#include "numoracle/plugin.h"

#if !defined(__HIP_DEVICE_COMPILE__)
extern "C" {
extern const nmo_plugin_kernel nmo_hip_kernels_rms_norm[];
extern const int nmo_hip_kernels_rms_norm_n;
extern const nmo_plugin_kernel nmo_hip_kernels_softmax[];
extern const int nmo_hip_kernels_softmax_n;
extern const nmo_plugin_kernel nmo_hip_kernels_matmul[];
extern const int nmo_hip_kernels_matmul_n;
}

namespace {
struct pick {
    const char *op, *name, *dtypes;
};
const pick picks[] = {
    {"rms_norm", "block256", "fp32 bf16 fp16"},
    {"rms_norm", "mut_w_off1", "fp32 bf16 fp16"},
    {"softmax", "block256", "fp32 bf16"},
    {"softmax", "mut_warp_max", "fp32 bf16"},
    {"matmul", "tc_mma", "bf16 fp16"},
    {"matmul", "tc_mut_tail_skip", "bf16 fp16"},
};
const int npicks = (int)(sizeof picks / sizeof picks[0]);
nmo_plugin_kernel table[sizeof picks / sizeof picks[0]];
nmo_plugin_info info;

const nmo_plugin_kernel *find(const pick &p)
{
    const nmo_plugin_kernel *t = strcmp(p.op, "rms_norm") == 0  ? nmo_hip_kernels_rms_norm
                                 : strcmp(p.op, "softmax") == 0 ? nmo_hip_kernels_softmax
                                                                : nmo_hip_kernels_matmul;
    int n = strcmp(p.op, "rms_norm") == 0  ? nmo_hip_kernels_rms_norm_n
            : strcmp(p.op, "softmax") == 0 ? nmo_hip_kernels_softmax_n
                                           : nmo_hip_kernels_matmul_n;
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, p.name) == 0) return &t[i];
    return NULL;
}
} // namespace

extern "C" NMO_PLUGIN_EXPORT const nmo_plugin_info *nmo_plugin_query(uint32_t host_abi_version)
{
    if (host_abi_version != NMO_PLUGIN_ABI_VERSION) return NULL;
    if (!info.abi_version) {
        int n = 0;
        for (int i = 0; i < npicks; i++) {
            const nmo_plugin_kernel *k = find(picks[i]);
            if (!k) continue;
            table[n] = *k;
            table[n].dtypes = picks[i].dtypes;
            n++;
        }
        info.struct_size = sizeof(nmo_plugin_info);
        info.kernel_size = sizeof(nmo_plugin_kernel);
        info.memory = NMO_PLUGIN_MEM_DEVICE;
        info.name = "example_hip";
        info.version = "1.0";
        info.n_kernels = n;
        info.kernels = table;
        info.provenance_json = "{\"example\":true,\"built_from\":\"hip/kernels\",\"platform\":\"" NMO_PLATFORM_NAME "\"}";
        info.abi_version = NMO_PLUGIN_ABI_VERSION;
    }
    return &info;
}
#endif
