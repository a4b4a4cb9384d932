/* numoracle: tensors — dtype, dims, element strides, raw little-endian .bin files. */
#ifndef NUMORACLE_TENSOR_H
#define NUMORACLE_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "numoracle/fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_MAX_DIMS 8
/* Absurd-shape guard: more elements than this is refused (NMO_ERR_SHAPE). */
#define NMO_MAX_ELEMS ((int64_t)1 << 34)
/* One tensor's storage is refused beyond 16 GiB, and beyond the physical memory, before
 * anything is allocated (a 234-byte graph once asked for 32 GiB). */
#define NMO_MAX_TENSOR_BYTES ((int64_t)1 << 34)

typedef struct {
    nmo_fmt dtype;
    int ndims;
    int64_t dims[NMO_MAX_DIMS];
    int64_t strides[NMO_MAX_DIMS]; /* in elements */
    void *data;                    /* owned when own != 0 */
    int own;
} nmo_tensor;

/* Bytes per element of a storage format (fp64 8, fp32/tf32 4, 16-bit 2, fp8 1). */
size_t nmo_fmt_bytes(nmo_fmt f);

/* Fill dims and packed row-major strides; data NULL. Checks 1 <= ndims <= NMO_MAX_DIMS,
 * dims >= 1 and the element count against NMO_MAX_ELEMS (NMO_ERR_SHAPE). */
nmo_status nmo_tensor_init(nmo_tensor *t, nmo_fmt dtype, int ndims, const int64_t *dims,
                           nmo_err *err);
/* Allocate zeroed storage for the span the strides cover. */
nmo_status nmo_tensor_alloc(nmo_tensor *t, nmo_err *err);
void nmo_tensor_free(nmo_tensor *t);

int64_t nmo_tensor_numel(const nmo_tensor *t);
/* Elements the storage must hold: 1 + sum (dims[i]-1)*strides[i]. */
int64_t nmo_tensor_span(const nmo_tensor *t);
int nmo_tensor_is_packed(const nmo_tensor *t);

/* Element i in logical row-major order, decoded exactly to double. */
double nmo_tensor_get(const nmo_tensor *t, int64_t i);
/* Store value already representable in dtype (or round it RNE). */
void nmo_tensor_set(nmo_tensor *t, int64_t i, double v);
/* Raw bit pattern of element i (for comparisons that care about NaN payloads). */
uint64_t nmo_tensor_get_bits(const nmo_tensor *t, int64_t i);
/* Store a raw bit pattern (low nmo_fmt_bytes*8 bits) as element i. */
void nmo_tensor_set_bits(nmo_tensor *t, int64_t i, uint64_t bits);
/* Storage offset, in elements, of logical row-major index i. */
int64_t nmo_tensor_offset(const nmo_tensor *t, int64_t i);

/* Decode count elements at storage offsets begin + i*stride (element units) into dst,
 * exactly; the dtype switch is hoisted out of the loop (hot path of the fast engine). */
void nmo_tensor_load_f64(double *dst, const nmo_tensor *t, int64_t begin, int64_t count,
                         int64_t stride);

/* Decode the whole tensor to a packed row-major double array (caller frees). */
nmo_status nmo_tensor_to_f64(double **out, const nmo_tensor *t, nmo_err *err);

/* Read a raw little-endian .bin into t (dims/dtype/strides already set): the file size
 * must equal span*bytes exactly; a mismatch is NMO_ERR_SIZE naming the file, expected
 * and actual bytes. */
nmo_status nmo_tensor_read_bin(nmo_tensor *t, const char *path, nmo_err *err);
/* Storage types a file may hold besides the number formats: hipDNN's INT32 and INT64
 * (class labels). They are file types only: a case holds labels as fp32 values. */
#define NMO_DT_INT32 ((int)NMO_FMT_COUNT + 0)
#define NMO_DT_INT64 ((int)NMO_FMT_COUNT + 1)

/* Bytes per element of a file storage type (an nmo_fmt or NMO_DT_INT*); 0 if unknown. */
size_t nmo_dt_bytes(int dt);
/* "int32", "int64", or nmo_fmt_name; NULL if unknown. */
const char *nmo_dt_file_name(int dt);
/* Element i of a packed little-endian buffer of storage type dt, as a double. Returns 1
 * when that double is the element's exact value (an int64 beyond 2^53 may not be). */
int nmo_raw_get_f64(double *v, const void *buf, int dt, int64_t i);

/* nmo_tensor_read_bin for a file whose elements are stored as file_dt (an nmo_fmt or
 * NMO_DT_INT32/INT64; packed row-major, little-endian): every value is converted into
 * t->dtype and must be representable there exactly (an int64 label into fp32, an fp32
 * file that holds bf16 values); otherwise NMO_ERR_DATA naming the file, the element and
 * the value. A size mismatch is NMO_ERR_SIZE as for nmo_tensor_read_bin. */
nmo_status nmo_tensor_read_bin_as(nmo_tensor *t, int file_dt, const char *path, nmo_err *err);

/* Write atomically (temporary file + rename). */
nmo_status nmo_tensor_write_bin(const nmo_tensor *t, const char *path, nmo_err *err);

/* Parse "4096x4096" / "2x3x5" into dims. */
nmo_status nmo_shape_parse(int *ndims, int64_t *dims, const char *text, nmo_err *err);

#ifdef __cplusplus
}
#endif
#endif
