/* numoracle GPU layer, -Dgpu=none: no device. Every call fails with NMO_ERR_UNSUPPORTED
 * and NMO_GPU_NONE_MSG; the HIP registry is empty. Nothing GPU-related is looked up. */
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"

#define NONE(err) nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s", NMO_GPU_NONE_MSG)

int nmo_gpu_enabled(void) { return 0; }
const char *nmo_gpu_platform(void) { return "none"; }
nmo_status nmo_gpu_init(nmo_err *err) { return NONE(err); }
void *nmo_gpu_stream(void) { return NULL; }
int nmo_gpu_warp_size(void) { return 0; }
nmo_status nmo_gpu_alloc(void **p, size_t bytes, nmo_err *err)
{
    (void)bytes;
    if (p) *p = NULL;
    return NONE(err);
}
void nmo_gpu_free(void *p) { (void)p; }
nmo_status nmo_gpu_poison(void *p, size_t bytes, nmo_err *err)
{
    (void)p, (void)bytes;
    return NONE(err);
}
nmo_status nmo_gpu_fill_async(void *p, int byte, size_t bytes, nmo_err *err)
{
    (void)p, (void)byte, (void)bytes;
    return NONE(err);
}
nmo_status nmo_gpu_h2d(void *dst, const void *src, size_t bytes, nmo_err *err)
{
    (void)dst, (void)src, (void)bytes;
    return NONE(err);
}
nmo_status nmo_gpu_d2h(void *dst, const void *src, size_t bytes, nmo_err *err)
{
    (void)dst, (void)src, (void)bytes;
    return NONE(err);
}
nmo_status nmo_gpu_d2d(void *dst, const void *src, size_t bytes, nmo_err *err)
{
    (void)dst, (void)src, (void)bytes;
    return NONE(err);
}
nmo_status nmo_gpu_timer_start(nmo_err *err) { return NONE(err); }
nmo_status nmo_gpu_timer_stop(double *ms, nmo_err *err)
{
    if (ms) *ms = 0.0;
    return NONE(err);
}
nmo_status nmo_gpu_sync_check(const char *what, nmo_err *err)
{
    (void)what;
    return NONE(err);
}
const char *nmo_gpu_provenance_json(void) { return "{\"platform\":\"none\"}"; }
int nmo_hip_kernel_count(void) { return 0; }
const nmo_plugin_kernel *nmo_hip_kernel_at(int i)
{
    (void)i;
    return NULL;
}
nmo_status nmo_gpu_conv_selftest(int64_t *bad_bf16, int64_t *bad_fp16, nmo_err *err)
{
    *bad_bf16 = *bad_fp16 = -1;
    return NONE(err);
}

nmo_status nmo_go_rowsumsq(const void *x, int in_bf16, int64_t rows, int64_t n, double *s,
                           int64_t *m, uint8_t *bad, nmo_err *err)
{
    (void)x, (void)in_bf16, (void)rows, (void)n, (void)s, (void)m, (void)bad;
    return NONE(err);
}
nmo_status nmo_go_rms_judge(const nmo_go_rms_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    (void)a, (void)acc_host;
    return NONE(err);
}
nmo_status nmo_go_rstd_probe(const nmo_go_rstd_consts *rc, int64_t n, const double *s_dev,
                             const double *m_dev, double *out_dev, int64_t count, nmo_err *err)
{
    (void)rc, (void)n, (void)s_dev, (void)m_dev, (void)out_dev, (void)count;
    return NONE(err);
}
nmo_status nmo_go_ln_probe(const double *in_dev, double *out_dev, int64_t count, double uc, double etac,
                           nmo_err *err)
{
    (void)in_dev, (void)out_dev, (void)count, (void)uc, (void)etac;
    return NONE(err);
}
nmo_status nmo_go_ew_judge(const nmo_go_ew_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    (void)a, (void)acc_host;
    return NONE(err);
}
nmo_status nmo_go_mm_zeros(const void *x, int in_bf16, int64_t n, unsigned long long *dev_out,
                           unsigned long long *host_out, nmo_err *err)
{
    (void)x, (void)in_bf16, (void)n, (void)dev_out, (void)host_out;
    return NONE(err);
}
nmo_status nmo_go_mm_judge(const nmo_go_mm_args *a, int count, nmo_go_acc *acc_host,
                           nmo_go_mm_ctr *ctr_host, nmo_err *err)
{
    (void)a, (void)count, (void)acc_host, (void)ctr_host;
    return NONE(err);
}
nmo_status nmo_go_mm_blas_probe(const double *A_host, const double *B_host, int64_t M, int64_t N,
                                int64_t K, double *s_host, double *a_host, nmo_err *err)
{
    (void)A_host, (void)B_host, (void)M, (void)N, (void)K, (void)s_host, (void)a_host;
    return NONE(err);
}
nmo_status nmo_go_smx_judge(const nmo_go_smx_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    (void)a, (void)acc_host;
    return NONE(err);
}
nmo_status nmo_go_ln_sums(const nmo_go_ln_args *a, int pass, nmo_err *err)
{
    (void)a, (void)pass;
    return NONE(err);
}
nmo_status nmo_go_ln_judge(const nmo_go_ln_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    (void)a, (void)acc_host;
    return NONE(err);
}
