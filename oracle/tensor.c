/* numoracle: tensors — dtype, dims, element strides, raw little-endian .bin files.
 *
 * Storage is raw element bit patterns, little-endian, `span` elements long (the span the
 * strides cover, so a strided view reads and writes its whole backing buffer, as the
 * hipDNN .bin layout stores it). Logical index i means row-major order over dims; the
 * storage offset of i is sum idx_k * strides[k].
 *
 * Decoding: every supported format is exactly representable in binary64. The hot path
 * (nmo_tensor_load_f64) switches on the dtype once and then runs a tight loop per
 * format: bf16 by a 16-bit shift into a float, fp16 and the four fp8 formats through
 * lookup tables built once (pthread_once) from nmo_fmt_decode, fp32/tf32 by memcpy into
 * a float (tf32 with its low 13 bits cleared, as nmo_fmt_decode and tensor cores do),
 * fp64 directly. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "numoracle/tensor.h"
#include "nmo_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "numoracle .bin I/O assumes a little-endian host"
#endif

size_t nmo_fmt_bytes(nmo_fmt f)
{
    switch (f) {
    case NMO_FP64: return 8;
    case NMO_FP32:
    case NMO_TF32: return 4;
    case NMO_BF16:
    case NMO_FP16: return 2;
    case NMO_FP8_E4M3:
    case NMO_FP8_E5M2:
    case NMO_FP8_E4M3FNUZ:
    case NMO_FP8_E5M2FNUZ: return 1;
    default: return 0;
    }
}

/* ---------------------------------------------------------------------------------- */
/* Shapes                                                                               */

nmo_status nmo_tensor_init(nmo_tensor *t, nmo_fmt dtype, int ndims, const int64_t *dims,
                           nmo_err *err)
{
    if (!t) return nmo_err_set(err, NMO_ERR_USAGE, "tensor: no tensor");
    if ((int)dtype < 0 || dtype >= NMO_FMT_COUNT)
        return nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "tensor: unknown dtype %d", (int)dtype);
    if (ndims < 1 || ndims > NMO_MAX_DIMS || !dims)
        return nmo_err_set(err, NMO_ERR_SHAPE, "tensor: %d dimensions (expected 1 to %d)", ndims,
                           NMO_MAX_DIMS);
    int64_t n = 1;
    for (int k = 0; k < ndims; k++) {
        if (dims[k] < 1)
            return nmo_err_set(err, NMO_ERR_SHAPE, "tensor: dimension %d is %lld (must be >= 1)",
                               k, (long long)dims[k]);
        if (dims[k] > NMO_MAX_ELEMS || n > NMO_MAX_ELEMS / dims[k])
            return nmo_err_set(err, NMO_ERR_SHAPE, "tensor: more than %lld elements",
                               (long long)NMO_MAX_ELEMS);
        n *= dims[k];
    }
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->ndims = ndims;
    int64_t s = 1;
    for (int k = ndims - 1; k >= 0; k--) {
        t->dims[k] = dims[k];
        t->strides[k] = s;
        s *= dims[k];
    }
    t->data = NULL;
    t->own = 0;
    return NMO_OK;
}

int64_t nmo_tensor_numel(const nmo_tensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->ndims; k++) n *= t->dims[k];
    return n;
}

int64_t nmo_tensor_span(const nmo_tensor *t)
{
    int64_t s = 1;
    for (int k = 0; k < t->ndims; k++) s += (t->dims[k] - 1) * t->strides[k];
    return s;
}

int nmo_tensor_is_packed(const nmo_tensor *t)
{
    int64_t s = 1;
    for (int k = t->ndims - 1; k >= 0; k--) {
        if (t->dims[k] != 1 && t->strides[k] != s) return 0;
        s *= t->dims[k];
    }
    return 1;
}

nmo_status nmo_tensor_alloc(nmo_tensor *t, nmo_err *err)
{
    int64_t span = nmo_tensor_span(t);
    size_t eb = nmo_fmt_bytes(t->dtype);
    if (span < 1 || span > NMO_MAX_ELEMS * 64 || eb == 0)
        return nmo_err_set(err, NMO_ERR_SHAPE, "tensor: bad span %lld", (long long)span);
    long long bytes = (long long)span * (long long)eb, lim = NMO_MAX_TENSOR_BYTES;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0 && (long long)pages * psz < lim) lim = (long long)pages * psz;
    if (bytes > lim)
        return nmo_err_set(err, NMO_ERR_SHAPE,
                           "tensor: %lld elements of %s need %lld bytes, over the limit of %lld (16 GiB or the physical memory)",
                           (long long)span, nmo_fmt_name(t->dtype), bytes, lim);
    void *p = calloc((size_t)span, eb);
    if (!p)
        return nmo_err_set(err, NMO_ERR_NOMEM, "tensor: cannot allocate %lld bytes",
                           (long long)span * (long long)eb);
    if (t->own) free(t->data);
    t->data = p;
    t->own = 1;
    return NMO_OK;
}

void nmo_tensor_free(nmo_tensor *t)
{
    if (!t) return;
    if (t->own) free(t->data);
    t->data = NULL;
    t->own = 0;
}

/* Storage offset (elements) of logical row-major index i. */
int64_t nmo_tensor_offset(const nmo_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int k = t->ndims - 1; k >= 0; k--) {
        int64_t d = t->dims[k];
        off += (i % d) * t->strides[k];
        i /= d;
    }
    return off;
}

/* ---------------------------------------------------------------------------------- */
/* Element access                                                                       */

static uint64_t bits_at(const nmo_tensor *t, int64_t off)
{
    const unsigned char *p = (const unsigned char *)t->data;
    switch (nmo_fmt_bytes(t->dtype)) {
    case 8: { uint64_t v; memcpy(&v, p + off * 8, 8); return v; }
    case 4: { uint32_t v; memcpy(&v, p + off * 4, 4); return v; }
    case 2: { uint16_t v; memcpy(&v, p + off * 2, 2); return v; }
    case 1: return p[off];
    default: return 0;
    }
}

static void bits_put(nmo_tensor *t, int64_t off, uint64_t b)
{
    unsigned char *p = (unsigned char *)t->data;
    switch (nmo_fmt_bytes(t->dtype)) {
    case 8: memcpy(p + off * 8, &b, 8); break;
    case 4: { uint32_t v = (uint32_t)b; memcpy(p + off * 4, &v, 4); break; }
    case 2: { uint16_t v = (uint16_t)b; memcpy(p + off * 2, &v, 2); break; }
    case 1: p[off] = (unsigned char)b; break;
    default: break;
    }
}

uint64_t nmo_tensor_get_bits(const nmo_tensor *t, int64_t i)
{
    return bits_at(t, nmo_tensor_offset(t, i));
}

void nmo_tensor_set_bits(nmo_tensor *t, int64_t i, uint64_t bits)
{
    bits_put(t, nmo_tensor_offset(t, i), bits);
}

double nmo_tensor_get(const nmo_tensor *t, int64_t i)
{
    return nmo_fmt_decode(t->dtype, nmo_tensor_get_bits(t, i));
}

void nmo_tensor_set(nmo_tensor *t, int64_t i, double v)
{
    const nmo_fmt_info *fi = nmo_fmt_get(t->dtype);
    uint64_t b = nmo_fmt_encode(t->dtype, v, NMO_RNE, 0, fi ? fi->ovf_default : NMO_OVF_IEEE);
    nmo_tensor_set_bits(t, i, b);
}

/* ---------------------------------------------------------------------------------- */
/* Fast decode                                                                          */

static float tab_fp16[65536];
static double tab_fp8[4][256]; /* E4M3, E5M2, E4M3FNUZ, E5M2FNUZ */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_build(void)
{
    /* fp16 values are all exact in float; NaN patterns stay NaN. */
    for (uint32_t b = 0; b < 65536; b++) tab_fp16[b] = (float)nmo_fmt_decode(NMO_FP16, b);
    static const nmo_fmt f8[4] = {NMO_FP8_E4M3, NMO_FP8_E5M2, NMO_FP8_E4M3FNUZ, NMO_FP8_E5M2FNUZ};
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) tab_fp8[k][b] = nmo_fmt_decode(f8[k], b);
}

void nmo_tensor_load_f64(double *dst, const nmo_tensor *t, int64_t begin, int64_t count,
                         int64_t stride)
{
    if (count <= 0) return;
    const unsigned char *base = (const unsigned char *)t->data;
    switch (t->dtype) {
    case NMO_FP64: {
        const unsigned char *p = base + begin * 8;
        if (stride == 1) {
            memcpy(dst, p, (size_t)count * 8);
        } else {
            for (int64_t j = 0; j < count; j++) memcpy(&dst[j], p + j * stride * 8, 8);
        }
        return;
    }
    case NMO_FP32: {
        const unsigned char *p = base + begin * 4;
        for (int64_t j = 0; j < count; j++) {
            float f;
            memcpy(&f, p + j * stride * 4, 4);
            dst[j] = f;
        }
        return;
    }
    case NMO_TF32: {
        /* As nmo_fmt_decode: the low 13 bits are ignored (as tensor cores do). */
        const unsigned char *p = base + begin * 4;
        for (int64_t j = 0; j < count; j++) {
            uint32_t u;
            memcpy(&u, p + j * stride * 4, 4);
            u &= 0xffffe000u;
            float f;
            memcpy(&f, &u, 4);
            dst[j] = f;
        }
        return;
    }
    case NMO_BF16: {
        const unsigned char *p = base + begin * 2;
        for (int64_t j = 0; j < count; j++) {
            uint16_t h;
            memcpy(&h, p + j * stride * 2, 2);
            uint32_t u = (uint32_t)h << 16;
            float f;
            memcpy(&f, &u, 4);
            dst[j] = f;
        }
        return;
    }
    case NMO_FP16: {
        pthread_once(&tab_once, tab_build);
        const unsigned char *p = base + begin * 2;
        for (int64_t j = 0; j < count; j++) {
            uint16_t h;
            memcpy(&h, p + j * stride * 2, 2);
            dst[j] = tab_fp16[h];
        }
        return;
    }
    case NMO_FP8_E4M3:
    case NMO_FP8_E5M2:
    case NMO_FP8_E4M3FNUZ:
    case NMO_FP8_E5M2FNUZ: {
        pthread_once(&tab_once, tab_build);
        const double *tab = tab_fp8[t->dtype - NMO_FP8_E4M3];
        const unsigned char *p = base + begin;
        for (int64_t j = 0; j < count; j++) dst[j] = tab[p[j * stride]];
        return;
    }
    default:
        for (int64_t j = 0; j < count; j++) dst[j] = __builtin_nan("");
        return;
    }
}

nmo_status nmo_tensor_to_f64(double **out, const nmo_tensor *t, nmo_err *err)
{
    *out = NULL;
    int64_t n = nmo_tensor_numel(t);
    double *d = malloc((size_t)n * sizeof(double));
    if (!d)
        return nmo_err_set(err, NMO_ERR_NOMEM, "tensor: cannot allocate %lld doubles",
                           (long long)n);
    if (nmo_tensor_is_packed(t)) {
        nmo_tensor_load_f64(d, t, 0, n, 1);
    } else {
        /* One innermost row at a time: walk the outer indices, load the last dim. */
        int last = t->ndims - 1;
        int64_t rl = t->dims[last], rows = n / rl;
        for (int64_t r = 0; r < rows; r++)
            nmo_tensor_load_f64(d + r * rl, t, nmo_tensor_offset(t, r * rl), rl,
                                t->strides[last]);
    }
    *out = d;
    return NMO_OK;
}

/* ---------------------------------------------------------------------------------- */
/* .bin files                                                                           */

nmo_status nmo_tensor_read_bin(nmo_tensor *t, const char *path, nmo_err *err)
{
    int64_t span = nmo_tensor_span(t);
    size_t eb = nmo_fmt_bytes(t->dtype);
    long long want = (long long)span * (long long)eb;
    FILE *f = nmo__fopen_regular(path, err); /* a FIFO is refused, not waited on */
    if (!f) return NMO_ERR_IO;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return nmo_err_set(err, NMO_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(f);
        return nmo_err_set(err, NMO_ERR_IO, "%s: not a regular file", path);
    }
    if ((long long)st.st_size != want) {
        fclose(f);
        return nmo_err_set(err, NMO_ERR_SIZE,
                           "%s: size %lld bytes, expected %lld (%lld elements of %s)", path,
                           (long long)st.st_size, want, (long long)span,
                           nmo_fmt_name(t->dtype));
    }
    if (!t->data) {
        nmo_status s = nmo_tensor_alloc(t, err);
        if (s != NMO_OK) {
            fclose(f);
            return s;
        }
    }
    size_t got = fread(t->data, 1, (size_t)want, f);
    int rerr = ferror(f) ? errno : 0;
    fclose(f);
    if (got != (size_t)want)
        return nmo_err_set(err, NMO_ERR_IO, "%s: short read (%zu of %lld bytes)%s%s", path, got,
                           want, rerr ? ": " : "", rerr ? strerror(rerr) : "");
    return NMO_OK;
}

size_t nmo_dt_bytes(int dt)
{
    if (dt == NMO_DT_INT32) return 4;
    if (dt == NMO_DT_INT64) return 8;
    if (dt >= 0 && dt < (int)NMO_FMT_COUNT) return nmo_fmt_bytes((nmo_fmt)dt);
    return 0;
}

const char *nmo_dt_file_name(int dt)
{
    if (dt == NMO_DT_INT32) return "int32";
    if (dt == NMO_DT_INT64) return "int64";
    if (dt >= 0 && dt < (int)NMO_FMT_COUNT) return nmo_fmt_name((nmo_fmt)dt);
    return NULL;
}

int nmo_raw_get_f64(double *v, const void *buf, int dt, int64_t i)
{
    const unsigned char *p = buf;
    if (dt == NMO_DT_INT32) {
        int32_t w;
        memcpy(&w, p + i * 4, 4);
        *v = w;
        return 1;
    }
    if (dt == NMO_DT_INT64) {
        int64_t w;
        memcpy(&w, p + i * 8, 8);
        *v = (double)w;
        /* exact iff it converts back (the double of INT64_MAX is 2^63: out of range) */
        return *v >= -0x1p63 && *v < 0x1p63 && (int64_t)*v == w;
    }
    nmo_fmt f = (nmo_fmt)dt;
    size_t eb = nmo_fmt_bytes(f);
    uint64_t b = 0;
    memcpy(&b, p + (size_t)i * eb, eb);
    *v = nmo_fmt_decode(f, b);
    return 1;
}

nmo_status nmo_tensor_read_bin_as(nmo_tensor *t, int file_dt, const char *path, nmo_err *err)
{
    if (file_dt == (int)t->dtype) return nmo_tensor_read_bin(t, path, err);
    const char *dn = nmo_dt_file_name(file_dt);
    if (!dn) return nmo_err_set(err, NMO_ERR_USAGE, "%s: unknown file dtype %d", path, file_dt);
    nmo_status s;
    int64_t n = nmo_tensor_numel(t);
    size_t eb = nmo_dt_bytes(file_dt);
    long long want = (long long)n * (long long)eb;
    FILE *f = nmo__fopen_regular(path, err);
    if (!f) return NMO_ERR_IO;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return nmo_err_set(err, NMO_ERR_IO, "%s: not a regular file", path);
    }
    if ((long long)st.st_size != want) {
        fclose(f);
        return nmo_err_set(err, NMO_ERR_SIZE, "%s: size %lld bytes, expected %lld (%lld elements of %s)",
                           path, (long long)st.st_size, want, (long long)n, dn);
    }
    unsigned char *buf = malloc((size_t)want ? (size_t)want : 1);
    if (!buf) {
        fclose(f);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, (size_t)want, f);
    fclose(f);
    if (got != (size_t)want) {
        free(buf);
        return nmo_err_set(err, NMO_ERR_IO, "%s: short read (%zu of %lld bytes)", path, got, want);
    }
    if (!t->data && (s = nmo_tensor_alloc(t, err)) != NMO_OK) {
        free(buf);
        return s;
    }
    for (int64_t i = 0; i < n; i++) {
        double v;
        int exact = nmo_raw_get_f64(&v, buf, file_dt, i);
        if (!exact || !nmo_fmt_is_repr(t->dtype, v)) {
            char val[32];
            if (file_dt == NMO_DT_INT64) {
                int64_t w;
                memcpy(&w, buf + i * 8, 8);
                snprintf(val, sizeof val, "%lld", (long long)w);
            } else {
                snprintf(val, sizeof val, "%.17g", v);
            }
            free(buf);
            return nmo_err_set(err, NMO_ERR_DATA, "%s: element %lld is %s (%s), not representable in %s",
                               path, (long long)i, val, dn, nmo_fmt_name(t->dtype));
        }
        nmo_tensor_set(t, i, v);
    }
    free(buf);
    return NMO_OK;
}

static atomic_uint tmp_seq;

nmo_status nmo_tensor_write_bin(const nmo_tensor *t, const char *path, nmo_err *err)
{
    size_t eb = nmo_fmt_bytes(t->dtype);
    size_t want = (size_t)nmo_tensor_span(t) * eb;
    if (!t->data) return nmo_err_set(err, NMO_ERR_USAGE, "%s: tensor has no data", path);
    if (nmo__out_is_direct(path)) return nmo__write_direct(path, t->data, want, err); /* a device: never replaced */
    /* Temporary name unique per process and per call (threads may write in parallel). */
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 64);
    if (!tmp) return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
    snprintf(tmp, pl + 64, "%s.tmp.%ld.%u", path, (long)getpid(),
             atomic_fetch_add(&tmp_seq, 1u));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        nmo_status s = nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return s;
    }
    const unsigned char *p = (const unsigned char *)t->data;
    size_t done = 0;
    while (done < want) {
        ssize_t w = write(fd, p + done, want - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        done += (size_t)w;
    }
    int e = done == want ? 0 : errno;
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) {
        unlink(tmp);
        nmo_status s = nmo_err_set(err, NMO_ERR_IO, "%s: cannot write: %s", path,
                                   strerror(e ? e : EIO));
        free(tmp);
        return s;
    }
    free(tmp);
    return NMO_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Shape text                                                                           */

static int is_sep(char c) { return c == 'x' || c == 'X' || c == ','; }
static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

nmo_status nmo_shape_parse(int *ndims, int64_t *dims, const char *text, nmo_err *err)
{
    if (!text) return nmo_err_set(err, NMO_ERR_PARSE, "shape: empty shape in ''");
    const char *s = text;
    while (is_ws(*s)) s++;
    if (!*s) return nmo_err_set(err, NMO_ERR_PARSE, "shape: empty shape in '%s'", text);
    int nd = 0;
    int64_t d[NMO_MAX_DIMS];
    int64_t total = 1;
    for (;;) {
        /* One token: up to the next separator, surrounding blanks ignored. */
        while (is_ws(*s)) s++;
        const char *b = s;
        while (*s && !is_sep(*s)) s++;
        const char *e = s;
        while (e > b && is_ws(e[-1])) e--;
        int tl = (int)(e - b);
        if (tl == 0) {
            if (!*s)
                return nmo_err_set(err, NMO_ERR_PARSE, "shape: missing dimension at end in '%s'",
                                   text);
            return nmo_err_set(err, NMO_ERR_PARSE, "shape: bad dimension '%c' in '%s'", *s, text);
        }
        const char *q = b;
        int neg = 0;
        if (*q == '-') { neg = 1; q++; }
        int digits = 0, over = 0;
        int64_t v = 0;
        for (; q < e; q++) {
            if (*q < '0' || *q > '9') break;
            digits++;
            if (v > (INT64_MAX - (*q - '0')) / 10) over = 1;
            else v = v * 10 + (*q - '0');
        }
        if (q != e || digits == 0)
            return nmo_err_set(err, NMO_ERR_PARSE, "shape: bad dimension '%.*s' in '%s'", tl, b,
                               text);
        if (neg || v == 0)
            return nmo_err_set(err, NMO_ERR_SHAPE,
                               "shape: dimension '%.*s' must be at least 1 in '%s'", tl, b, text);
        if (nd == NMO_MAX_DIMS)
            return nmo_err_set(err, NMO_ERR_SHAPE, "shape: more than %d dimensions in '%s'",
                               NMO_MAX_DIMS, text);
        if (over || v > NMO_MAX_ELEMS || total > NMO_MAX_ELEMS / v)
            return nmo_err_set(err, NMO_ERR_SHAPE, "shape: more than %lld elements in '%s'",
                               (long long)NMO_MAX_ELEMS, text);
        total *= v;
        d[nd++] = v;
        if (!*s) break;
        s++; /* separator */
    }
    *ndims = nd;
    memcpy(dims, d, sizeof(int64_t) * (size_t)nd);
    return NMO_OK;
}
