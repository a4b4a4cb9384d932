/* numoracle: status codes (zstd-style pinned enum, no global error state). */
#ifndef NUMORACLE_STATUS_H
#define NUMORACLE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Values are pinned: never renumber, only append. */
typedef enum {
    NMO_OK = 0,
    NMO_ERR_GENERIC = 1,
    NMO_ERR_USAGE = 2,          /* bad CLI usage or API argument */
    NMO_ERR_IO = 3,             /* cannot open/read/write a file */
    NMO_ERR_PARSE = 4,          /* malformed text: plan, shape, JSON */
    NMO_ERR_SIZE = 5,           /* file or buffer size does not match dims/dtype */
    NMO_ERR_UNKNOWN_OP = 6,
    NMO_ERR_UNKNOWN_DTYPE = 7,
    NMO_ERR_UNKNOWN_FAMILY = 8,
    NMO_ERR_UNKNOWN_CANDIDATE = 9,
    NMO_ERR_NOMEM = 10,
    NMO_ERR_UNSUPPORTED = 11,   /* valid request this build/op cannot serve */
    NMO_ERR_SHAPE = 12,         /* absurd or inconsistent shape */
    NMO_ERR_DATA = 13,          /* bad data: NaN in a golden, bad bundle */
    NMO_STATUS_COUNT
} nmo_status;

/* Static string for a status; never NULL. */
const char *nmo_strerror(nmo_status s);

/* Optional error detail: callers pass NULL or a buffer that receives a one-line message
 * naming the file, field or value at fault. */
typedef struct {
    char msg[512];
} nmo_err;

/* Set err->msg (printf-style) if err is non-NULL; returns s so callers can `return`. */
nmo_status nmo_err_set(nmo_err *err, nmo_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define NMO_RETURN_IF_ERR(expr)                                                          \
    do {                                                                                 \
        nmo_status nmo_rie_s_ = (expr);                                                  \
        if (nmo_rie_s_ != NMO_OK) return nmo_rie_s_;                                     \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
