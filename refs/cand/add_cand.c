/* numoracle: CPU candidates for add — broadcasting y[..., j] = a[..., j] + b[j].
 *
 *   in  a[..., N], b[N]   dtype plan->in;   out y[..., N]   dtype plan->out
 *
 * Rounding points: the fp32 op (or, native16, the exact result rounded once straight into
 * the 16-bit storage dtype) and the store into plan->out. The kernels are in
 * pw_cand_util.h (pw_cand_cols, pw_bcast_elem); vec4 computes the values of scalar
 * (a float4 body), so it differs from scalar only on the GPU. */
#include "pw_cand_util.h"

PW_BCAST_CAND(add_scalar, "add", 0, PW_BC_SCALAR, PW_COL_J, 0)
PW_BCAST_CAND(add_vec4, "add", 0, PW_BC_SCALAR, PW_COL_J, 0)
PW_BCAST_CAND(add_native16, "add", 0, PW_BC_NATIVE16, PW_COL_J, 0)
PW_BCAST_CAND(add_fma, "add", 0, PW_BC_FMA, PW_COL_J, 0)
PW_BCAST_CAND(add_mut_bcast_row, "add", 0, PW_BC_SCALAR, PW_COL_ROW, 0)
PW_BCAST_CAND(add_mut_bcast_zero, "add", 0, PW_BC_SCALAR, PW_COL_ZERO, 0)
PW_BCAST_CAND(add_mut_b_off1, "add", 0, PW_BC_SCALAR, PW_COL_OFF1, 0)
PW_BCAST_CAND(add_mut_tail, "add", 0, PW_BC_SCALAR, PW_COL_NO_TAIL, 0)
PW_BCAST_CAND(add_mut_store_rz, "add", 0, PW_BC_SCALAR, PW_COL_J, 1)

const nmo_cand nmo_cand_add[] = {
    {"add", "scalar", 1, "one thread per element: a + b[j] in fp32", add_scalar, NULL},
    {"add", "vec4", 1, "float4 body plus a scalar tail", add_vec4, NULL},
    {"add", "native16", 1, "native 16-bit arithmetic: the exact result rounded once into the dtype",
     add_native16, NULL},
    {"add", "fma", 1, "fmaf(b, 1, a)", add_fma, NULL},
    {"add", "mut_bcast_row", 0, "MUTANT: wrong broadcast stride, b indexed by the row (b[r mod N])",
     add_mut_bcast_row, NULL},
    {"add", "mut_bcast_zero", 0, "MUTANT: wrong broadcast stride, stride 0 on the last dim (b[0])",
     add_mut_bcast_zero, NULL},
    {"add", "mut_b_off1", 0, "MUTANT: b index off by one, b[(j+1) mod N]", add_mut_b_off1, NULL},
    {"add", "mut_tail", 0, "MUTANT: vec4 kernel that never writes the N mod 4 tail", add_mut_tail, NULL},
    {"add", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", add_mut_store_rz, NULL},
};
const int nmo_cand_add_n = (int)(sizeof nmo_cand_add / sizeof nmo_cand_add[0]);
