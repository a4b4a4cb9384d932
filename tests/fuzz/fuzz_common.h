/* numoracle fuzz harnesses: shared helpers. Each harness defines LLVMFuzzerTestOneInput;
 * built with libFuzzer (`make fuzz`, clang) or with replay.c (gcc, `meson test`: every
 * corpus file once). */
#ifndef NMO_FUZZ_COMMON_H
#define NMO_FUZZ_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A private scratch directory, made once per process (removed by nothing: under /tmp). */
static inline const char *fuzz_dir(void)
{
    static char d[256];
    if (!d[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(d, sizeof d, "%s/nmo-fuzz.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(d)) abort();
    }
    return d;
}

/* Write len bytes to dir/name (whole file); aborts on failure (a harness fault). */
static inline void fuzz_write(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0) abort();
}

/* Split data at the first NUL: part a (then b, possibly empty; *has_b says whether a
 * NUL was there). */
static inline void fuzz_split(const uint8_t *data, size_t size, size_t *la, const uint8_t **b, size_t *lb, int *has_b)
{
    const uint8_t *z = memchr(data, 0, size);
    *has_b = z != NULL;
    *la = z ? (size_t)(z - data) : size;
    *b = z ? z + 1 : data + size;
    *lb = z ? size - *la - 1 : 0;
}
#endif
