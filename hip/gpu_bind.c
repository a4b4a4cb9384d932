/* libnumoracle_gpu.so (issue 22): the GPU tier for language bindings. libnumoracle cannot
 * hold it (the library sits below hip/ and never includes a GPU header), so a build with
 * -Dgpu=cuda|hip|sim ships this small shared library: its private copy of the oracle and
 * the GPU tier, and one exported function returning the checker that a binding installs
 * into the libnumoracle it loaded (bind.h nmo_bind_set_device_checker). The checker gets
 * the case that libnumoracle's nmo_bind_check built (inputs on the host) and the
 * candidate's device pointer: nmo_gpu_check judges it in device memory when the GPU tier
 * covers the case; otherwise the candidate is copied to the host once and nmo_check
 * judges it (same verdicts, slower), so a binding never has to know which operators the
 * tier covers. */
#include <stdlib.h>

#include "numoracle/numoracle.h"
#include "numoracle/bind.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"

static long n_device; /* checks nmo_gpu_check judged in device memory (testing) */

static int device_check(void *repp, const void *cp, const void *cand_dev, const void *optsp, void *errp)
{
    nmo_report *rep = repp;
    const nmo_case *c = cp;
    const nmo_check_opts *o = optsp;
    nmo_err *err = errp;
    if (nmo_gpu_check_supported(c, NULL)) {
        __atomic_fetch_add(&n_device, 1, __ATOMIC_RELAXED);
        return nmo_gpu_check(rep, c, cand_dev, NULL, o, NULL, err);
    }
    nmo_tensor h = c->out[0];
    h.dtype = c->plan.out;
    h.data = NULL, h.own = 0;
    nmo_status s = nmo_tensor_alloc(&h, err);
    if (s == NMO_OK) s = nmo_gpu_init(err);
    if (s == NMO_OK) s = nmo_gpu_d2h(h.data, cand_dev, (size_t)nmo_tensor_numel(&h) * nmo_fmt_bytes(h.dtype), err);
    if (s == NMO_OK) s = nmo_check(rep, c, &h, o, err);
    nmo_tensor_free(&h);
    return s;
}

/* the checker for nmo_bind_set_device_checker, and which device platform it drives */
NMO_API nmo_bind_device_checker nmo_gpu_bind_checker(void) { return device_check; }
NMO_API const char *nmo_gpu_bind_platform(void) { return nmo_gpu_platform(); }
/* how many checks ran in device memory (the others: the candidate copied to the host) */
NMO_API long nmo_gpu_bind_device_checks(void) { return __atomic_load_n(&n_device, __ATOMIC_RELAXED); }
