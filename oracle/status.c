/* numoracle: status strings and error details (zstd-style, no global state). */
#include <stdarg.h>
#include <stdio.h>

#include "numoracle/status.h"

static const char *const nmo_status_str[NMO_STATUS_COUNT] = {
    [NMO_OK] = "no error",
    [NMO_ERR_GENERIC] = "error",
    [NMO_ERR_USAGE] = "bad usage or argument",
    [NMO_ERR_IO] = "cannot open, read or write a file",
    [NMO_ERR_PARSE] = "malformed text",
    [NMO_ERR_SIZE] = "size does not match dims and dtype",
    [NMO_ERR_UNKNOWN_OP] = "unknown operator",
    [NMO_ERR_UNKNOWN_DTYPE] = "unknown data type",
    [NMO_ERR_UNKNOWN_FAMILY] = "unknown input family",
    [NMO_ERR_UNKNOWN_CANDIDATE] = "unknown candidate",
    [NMO_ERR_NOMEM] = "out of memory",
    [NMO_ERR_UNSUPPORTED] = "unsupported by this build or operator",
    [NMO_ERR_SHAPE] = "bad or inconsistent shape",
    [NMO_ERR_DATA] = "bad data",
};

const char *nmo_strerror(nmo_status s)
{
    /* out-of-range codes (a newer library's status) still get a string, never NULL */
    if ((unsigned)s >= NMO_STATUS_COUNT || !nmo_status_str[s]) return "unknown status";
    return nmo_status_str[s];
}

nmo_status nmo_err_set(nmo_err *err, nmo_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}
