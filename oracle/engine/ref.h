/* numoracle: writing a reference kernel once for both engines.
 *
 * A file refs/<op>.c is compiled twice (refs/meson.build): with NMO_ENGINE_FAST and with
 * NMO_ENGINE_CERT. It writes its evaluation against the engine-neutral names below
 * (type E, context E_CTX, primitives enc_*), wraps the function name in NMO_REF(), and
 * defines its nmo_op descriptor inside `#ifdef NMO_ENGINE_FAST` using
 * NMO_REF_FAST(f) / NMO_REF_CERT(f) for the two compiled versions of f.
 *
 * Rules for a reference kernel:
 *  - state the rounding points in a comment block at the top of the file;
 *  - every value the kernel holds goes through a primitive (never raw double math on
 *    enclosures): that is what keeps both engines evaluating the same formulas;
 *  - declare locals with E and call enc_init/enc_clear (no-ops in the fast engine);
 *  - decode inputs with nmo_tensor_load_f64 into enc_dvec scratch. */
#ifndef NUMORACLE_REF_H
#define NUMORACLE_REF_H

#include "numoracle/op.h"
#include "engine/enc_fast.h"
#include "engine/enc_cert.h"

#define NMO_CAT_(a, b) a##b
#define NMO_CAT(a, b) NMO_CAT_(a, b)

#define NMO_REF_FAST(f) NMO_CAT(f, _fast)
#define NMO_REF_CERT(f) NMO_CAT(f, _cert)

#if defined(NMO_ENGINE_FAST)
typedef nmo_fenc E;
typedef nmo_fctx E_CTX;
#define NMO_REF(f) NMO_REF_FAST(f)
#define NMO_ENC(op) NMO_CAT(nmo_fenc_, op)
#define enc_dvec nmo_fctx_dvec
#define enc_evec nmo_fctx_evec
#elif defined(NMO_ENGINE_CERT)
typedef nmo_cenc E;
typedef nmo_cctx E_CTX;
#define NMO_REF(f) NMO_REF_CERT(f)
#define NMO_ENC(op) NMO_CAT(nmo_cenc_, op)
#define enc_dvec nmo_cctx_dvec
#define enc_evec nmo_cctx_evec
#endif

#if defined(NMO_ENGINE_FAST) || defined(NMO_ENGINE_CERT)
#define enc_init NMO_ENC(init)
#define enc_clear NMO_ENC(clear)
#define enc_set NMO_ENC(set)
#define enc_set_d NMO_ENC(set_d)
#define enc_set_fenc NMO_ENC(set_fenc)
#define enc_const NMO_ENC(const)
#define enc_add NMO_ENC(add)
#define enc_sub NMO_ENC(sub)
#define enc_neg NMO_ENC(neg)
#define enc_mul NMO_ENC(mul)
#define enc_div NMO_ENC(div)
#define enc_div_si NMO_ENC(div_si)
#define enc_fma NMO_ENC(fma)
#define enc_sqrt NMO_ENC(sqrt)
#define enc_rsqrt NMO_ENC(rsqrt)
#define enc_exp NMO_ENC(exp)
#define enc_log NMO_ENC(log)
#define enc_tanh NMO_ENC(tanh)
#define enc_erf NMO_ENC(erf)
#define enc_sigmoid NMO_ENC(sigmoid)
#define enc_max NMO_ENC(max)
#define enc_min NMO_ENC(min)
#define enc_mul3 NMO_ENC(mul3)
#define enc_mul3_row NMO_ENC(mul3_row)
#define enc_exp_sub_row NMO_ENC(exp_sub_row)
#define enc_divmul_row NMO_ENC(divmul_row)
#define enc_round NMO_ENC(round)
#define enc_sum NMO_ENC(sum)
#define enc_dot_d NMO_ENC(dot_d)
#define enc_sumsq_d NMO_ENC(sumsq_d)
#define enc_max_v NMO_ENC(max_v)
#define enc_export NMO_ENC(export)
#define enc_hull NMO_ENC(hull)
#define enc_gemm_elem NMO_ENC(gemm_elem)
#define enc_gemm_row NMO_ENC(gemm_row)
#define enc_prodk NMO_ENC(prodk)
#define enc_dotk NMO_ENC(dotk)
#define enc_scale_shift NMO_ENC(scale_shift)
#define enc_sum_sharp NMO_ENC(sum_sharp)
#define enc_dot_sharp_d NMO_ENC(dot_sharp_d)
#define enc_dot_ed NMO_ENC(dot_ed)
#define enc_widen NMO_ENC(widen)
#define enc_gemm_elem_t NMO_ENC(gemm_elem_t)
#define enc_gemm_partials NMO_ENC(gemm_partials)
#endif

/* Code that exists in the fast engine's compilation only (term escalation: see
 * nmo_fctx_term_cert in enc_fast.h). */
#if defined(NMO_ENGINE_FAST)
#define NMO_FAST_ONLY(...) __VA_ARGS__
#else
#define NMO_FAST_ONLY(...)
#endif

/* The store of an output: the kernel's value passes the `inter` rounding point only if
 * the op says so; the final store into `out` is applied by the checker. */

#endif
