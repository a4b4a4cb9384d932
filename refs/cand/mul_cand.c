/* numoracle: CPU candidates for mul — broadcasting y[..., j] = a[..., j] * b[j].
 *
 *   in  a[..., N], b[N]   dtype plan->in;   out y[..., N]   dtype plan->out
 *
 * Rounding points: the fp32 op (or, native16, the exact result rounded once straight into
 * the 16-bit storage dtype) and the store into plan->out. The kernels are in
 * pw_cand_util.h (pw_cand_cols, pw_bcast_elem); vec4 computes the values of scalar
 * (a float4 body), so it differs from scalar only on the GPU. */
#include "pw_cand_util.h"

PW_BCAST_CAND(mul_scalar, "mul", 1, PW_BC_SCALAR, PW_COL_J, 0)
PW_BCAST_CAND(mul_vec4, "mul", 1, PW_BC_SCALAR, PW_COL_J, 0)
PW_BCAST_CAND(mul_native16, "mul", 1, PW_BC_NATIVE16, PW_COL_J, 0)
PW_BCAST_CAND(mul_fma, "mul", 1, PW_BC_FMA, PW_COL_J, 0)
PW_BCAST_CAND(mul_mut_bcast_row, "mul", 1, PW_BC_SCALAR, PW_COL_ROW, 0)
PW_BCAST_CAND(mul_mut_bcast_zero, "mul", 1, PW_BC_SCALAR, PW_COL_ZERO, 0)
PW_BCAST_CAND(mul_mut_b_off1, "mul", 1, PW_BC_SCALAR, PW_COL_OFF1, 0)
PW_BCAST_CAND(mul_mut_tail, "mul", 1, PW_BC_SCALAR, PW_COL_NO_TAIL, 0)
PW_BCAST_CAND(mul_mut_store_rz, "mul", 1, PW_BC_SCALAR, PW_COL_J, 1)

const nmo_cand nmo_cand_mul[] = {
    {"mul", "scalar", 1, "one thread per element: a * b[j] in fp32", mul_scalar, NULL},
    {"mul", "vec4", 1, "float4 body plus a scalar tail", mul_vec4, NULL},
    {"mul", "native16", 1, "native 16-bit arithmetic: the exact result rounded once into the dtype",
     mul_native16, NULL},
    {"mul", "fma", 1, "fmaf(a, b, +0) (a zero product may come out +0)", mul_fma, NULL},
    {"mul", "mut_bcast_row", 0, "MUTANT: wrong broadcast stride, b indexed by the row (b[r mod N])",
     mul_mut_bcast_row, NULL},
    {"mul", "mut_bcast_zero", 0, "MUTANT: wrong broadcast stride, stride 0 on the last dim (b[0])",
     mul_mut_bcast_zero, NULL},
    {"mul", "mut_b_off1", 0, "MUTANT: b index off by one, b[(j+1) mod N]", mul_mut_b_off1, NULL},
    {"mul", "mut_tail", 0, "MUTANT: vec4 kernel that never writes the N mod 4 tail", mul_mut_tail, NULL},
    {"mul", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", mul_mut_store_rz, NULL},
};
const int nmo_cand_mul_n = (int)(sizeof nmo_cand_mul / sizeof nmo_cand_mul[0]);
