/* numoracle HIP kernels: what swiglu.hip and geglu.hip share (the shape and alignment
 * check of y = act(a) * b). */
#ifndef NMO_K_GLU_COMMON_H
#define NMO_K_GLU_COMMON_H
#include "kcommon.h"

namespace {

int swiglu_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 2, 1)) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1]) || !nmo_k_same_dims(&a->in[0], &a->out[0])) return 0;
    return nmo_k_aligned16(a->in[0].data) && nmo_k_aligned16(a->in[1].data) &&
           nmo_k_aligned16(a->out[0].data);
}

} // namespace

#endif
