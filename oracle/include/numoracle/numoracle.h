/* numoracle: the public C API (umbrella header).
 *
 *   nmo_case c;  nmo_case_init(&c, nmo_op_find("rms_norm"), &plan, 2, shape, &err);
 *   ... fill c.in[k].data (or nmo_case_fill) ...
 *   nmo_report rep;  nmo_check(&rep, &c, candidate_outputs, NULL, &err);
 *   rep.verdict == NMO_PASS / NMO_FAIL / NMO_INCONCLUSIVE
 */
#ifndef NUMORACLE_H
#define NUMORACLE_H

#include "numoracle/status.h"
#include "numoracle/fmt.h"
#include "numoracle/plan.h"
#include "numoracle/tensor.h"
#include "numoracle/gen.h"
#include "numoracle/op.h"
#include "numoracle/check.h"
#include "numoracle/cand.h"
#include "numoracle/invariance.h"
#include "numoracle/contract.h"
#include "numoracle/bind.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *nmo_version(void);

#ifdef __cplusplus
}
#endif
#endif
