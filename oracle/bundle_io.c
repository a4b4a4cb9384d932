/* numoracle: file-system helpers of the bundle code — whole-file reads, JSON parsing with
 * line numbers, path containment, plain and atomic file writes, and atomic directories
 * (a hidden temporary sibling renamed onto the target, so a killed writer never leaves a
 * partial bundle where a reader looks). */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "nmo_internal.h"

char *nmo__read_text(const char *path, size_t *len, nmo_err *err)
{
    FILE *f = nmo__fopen_regular(path, err);
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        nmo_err_set(err, NMO_ERR_IO, "%s: not a regular file", path);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *s = malloc(n + 1);
    if (!s) {
        fclose(f);
        nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    size_t got = fread(s, 1, n, f);
    fclose(f);
    if (got != n) {
        free(s);
        nmo_err_set(err, NMO_ERR_IO, "%s: short read", path);
        return NULL;
    }
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* cJSON keeps both members of {"a": 1, "a": 2} and its lookups return the first: a
 * repeated key is refused instead of silently keeping one (issue 16.12). Returns the
 * first repeated key found (depth first), NULL when there is none; *oom on no memory. */
static const char *dup_key(const cJSON *j, int *oom)
{
    if (!cJSON_IsObject(j) && !cJSON_IsArray(j)) return NULL;
    size_t n = 0;
    for (const cJSON *c = j->child; c; c = c->next) {
        const char *d = dup_key(c, oom);
        if (d || *oom) return d;
        n++;
    }
    if (!cJSON_IsObject(j) || n < 2) return NULL;
    const char **keys = malloc(n * sizeof *keys);
    if (!keys) {
        *oom = 1;
        return NULL;
    }
    size_t k = 0;
    for (const cJSON *c = j->child; c; c = c->next) keys[k++] = c->string ? c->string : "";
    qsort(keys, n, sizeof *keys, cmp_str);
    const char *d = NULL;
    for (k = 1; k < n && !d; k++)
        if (strcmp(keys[k - 1], keys[k]) == 0) d = keys[k];
    free(keys);
    return d;
}

/* JSON text must be UTF-8 and cJSON copies a string's bytes as they are: a file name
 * that is not UTF-8 (Linux allows any byte but '/' and NUL) made the report invalid.
 * Every byte that does not start a well-formed UTF-8 sequence (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF) becomes U+FFFD, the replacement character:
 * the name is shown lossily, the report stays valid (issue 16.12). */
char *nmo__json_print(const cJSON *j, int formatted)
{
    char *t = formatted ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
    if (!t) return NULL;
    size_t n = strlen(t), bad = 0;
    const unsigned char *u = (const unsigned char *)t;
    for (size_t i = 0; i < n;) {
        size_t k = nmo__utf8_len(u + i, n - i);
        if (k) i += k;
        else bad++, i++;
    }
    if (!bad) return t;
    char *o = malloc(n + 2 * bad + 1);
    if (!o) {
        free(t);
        return NULL;
    }
    size_t q = 0;
    for (size_t i = 0; i < n;) {
        size_t k = nmo__utf8_len(u + i, n - i);
        if (k) {
            memcpy(o + q, t + i, k);
            q += k, i += k;
        } else {
            memcpy(o + q, "\xEF\xBF\xBD", 3);
            q += 3, i++;
        }
    }
    o[q] = '\0';
    free(t);
    return o;
}

size_t nmo__utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t k;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF) k = 2;
    else if (c == 0xE0) k = 3, lo = 0xA0;
    else if (c == 0xED) k = 3, hi = 0x9F; /* no surrogates */
    else if (c >= 0xE1 && c <= 0xEF) k = 3;
    else if (c == 0xF0) k = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) k = 4;
    else if (c == 0xF4) k = 4, hi = 0x8F;
    else return 0;
    if (n < k || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return k;
}

nmo_status nmo__json_check_keys(const cJSON *j, const char *path, nmo_err *err)
{
    int oom = 0;
    const char *d = dup_key(j, &oom);
    if (oom) return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
    if (d) return nmo_err_set(err, NMO_ERR_PARSE, "%s: key '%s' appears twice in one object", path, d);
    return NMO_OK;
}

cJSON *nmo__parse_json(const char *text, const char *path, nmo_err *err)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
    if (j && nmo__json_check_keys(j, path, err) != NMO_OK) {
        cJSON_Delete(j);
        return NULL;
    }
    if (!j) {
        /* cJSON reports where it stopped; turn that into a line and column */
        int line = 1, col = 1;
        for (const char *p = text; end && p < end && *p; p++) {
            if (*p == '\n') line++, col = 1;
            else col++;
        }
        nmo_err_set(err, NMO_ERR_PARSE, "%s: not valid JSON (line %d, column %d)", path, line, col);
    }
    return j;
}

/* cJSON takes ~25x the text in memory: a 60 MB graph once peaked at 1.6 GB */
#define NMO_MAX_JSON_BYTES ((size_t)32 << 20)

cJSON *nmo__read_json(const char *path, nmo_err *err)
{
    size_t len;
    char *t = nmo__read_text(path, &len, err);
    if (!t) return NULL;
    if (len > NMO_MAX_JSON_BYTES) {
        free(t);
        nmo_err_set(err, NMO_ERR_SIZE, "%s: %zu bytes of JSON, over the limit of %zu (32 MiB)", path, len, NMO_MAX_JSON_BYTES);
        return NULL;
    }
    cJSON *j = nmo__parse_json(t, path, err);
    free(t);
    return j;
}

int nmo__json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    /* range first: casting a double outside int64_t is undefined ((double)INT64_MAX is 2^63) */
    if (d != d || d < (double)lo || d > (double)hi || d >= 0x1p63 || d < -0x1p63 || d != (double)(int64_t)d)
        return 0;
    *out = (int64_t)d;
    return 1;
}

void nmo__join(char *out, size_t n, const char *a, const char *b)
{
    if (!a || !*a || b[0] == '/') snprintf(out, n, "%s", b);
    else if (a[strlen(a) - 1] == '/') snprintf(out, n, "%s%s", a, b);
    else snprintf(out, n, "%s/%s", a, b);
}

int nmo__exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int nmo__is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int nmo__inside(const char *root, const char *path)
{
    char r[PATH_MAX], p[PATH_MAX];
    if (!realpath(root, r) || !realpath(path, p)) return 0;
    size_t n = strlen(r);
    if (strcmp(r, "/") == 0) return 1;
    return strncmp(r, p, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

void nmo__fmt_dims(char *buf, size_t n, int ndims, const int64_t *dims)
{
    size_t off = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndims && off < n; d++)
        off += (size_t)snprintf(buf + off, n - off, d ? ", %lld" : "%lld", (long long)dims[d]);
    if (off < n) snprintf(buf + off, n - off, "]");
}

void nmo__fmt_index(char *buf, size_t n, int ndims, const int64_t *dims, int64_t idx)
{
    int64_t co[NMO_MAX_DIMS];
    for (int d = ndims - 1; d >= 0; d--) {
        co[d] = idx % dims[d];
        idx /= dims[d];
    }
    nmo__fmt_dims(buf, n, ndims, co);
}

static nmo_status write_fd(int fd, const char *path, const void *data, size_t len, nmo_err *err)
{
    const unsigned char *p = data;
    size_t done = 0;
    int e = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            e = errno;
            break;
        }
        done += (size_t)w;
    }
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    return NMO_OK;
}

nmo_status nmo__write_file(const char *path, const void *data, size_t len, nmo_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    return write_fd(fd, path, data, len, err);
}

static atomic_uint tmp_seq;

nmo_status nmo__write_file_atomic(const char *path, const void *data, size_t len, nmo_err *err)
{
    if (nmo__out_is_direct(path)) return nmo__write_direct(path, data, len, err);
    char tmp[NMO_BPATH + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_seq, 1u));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    nmo_status s = write_fd(fd, path, data, len, err);
    if (s == NMO_OK && rename(tmp, path) != 0)
        s = nmo_err_set(err, NMO_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    if (s != NMO_OK) unlink(tmp);
    return s;
}

/* ---- atomic directories ----------------------------------------------------------- */

void nmo_bundle_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char p[NMO_BPATH + 256];
            nmo__join(p, sizeof p, dir, e->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) nmo_bundle_dir_remove(p);
            else unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static nmo_status mkdir_p(const char *path, nmo_err *err)
{
    char buf[NMO_BPATH];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
    return NMO_OK;
}

static void split_parent(const char *path, char *parent, size_t np, char *leaf, size_t nl)
{
    char buf[NMO_BPATH];
    snprintf(buf, sizeof buf, "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash) {
        snprintf(parent, np, ".");
        snprintf(leaf, nl, "%s", buf);
    } else {
        snprintf(leaf, nl, "%s", slash + 1);
        if (slash == buf) snprintf(parent, np, "/");
        else {
            *slash = '\0';
            snprintf(parent, np, "%s", buf);
        }
    }
}

/* Temporaries are ".{leaf}.tmp-{pid}-XXXXXX": a later writer removes those whose pid is
 * gone (a writer killed by SIGKILL cannot clean up after itself). */
static void remove_stale(const char *parent, const char *leaf)
{
    char prefix[300];
    snprintf(prefix, sizeof prefix, ".%s.tmp-", leaf);
    size_t pl = strlen(prefix);
    DIR *d = opendir(parent);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, pl) != 0) continue;
        long pid = strtol(e->d_name + pl, NULL, 10);
        if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;
        char p[NMO_BPATH + 300];
        nmo__join(p, sizeof p, parent, e->d_name);
        nmo_bundle_dir_remove(p);
    }
    closedir(d);
}

nmo_status nmo_bundle_dir_begin(char *tmp, size_t n, const char *final_dir, nmo_err *err)
{
    char parent[NMO_BPATH], leaf[256];
    split_parent(final_dir, parent, sizeof parent, leaf, sizeof leaf);
    NMO_RETURN_IF_ERR(mkdir_p(parent, err));
    remove_stale(parent, leaf);
    char name[400];
    snprintf(name, sizeof name, ".%s.tmp-%ld-XXXXXX", leaf, (long)getpid());
    nmo__join(tmp, n, parent, name);
    if (!mkdtemp(tmp))
        return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create a temporary directory: %s", parent,
                           strerror(errno));
    chmod(tmp, 0777 & ~(mode_t)0022);
    return NMO_OK;
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int rename2(const char *from, const char *to, unsigned flags)
{
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
#else
    (void)from, (void)to, (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

nmo_status nmo_bundle_dir_commit(const char *tmp, const char *final_dir, int force, nmo_err *err)
{
    char parent[NMO_BPATH], leaf[256];
    split_parent(final_dir, parent, sizeof parent, leaf, sizeof leaf);
    fsync_dir(tmp);
    if (!nmo__exists(final_dir)) {
        /* RENAME_NOREPLACE closes the race with a concurrent writer; plain rename where
         * the file system lacks renameat2 */
        if (rename2(tmp, final_dir, RENAME_NOREPLACE) != 0) {
            if ((errno == EINVAL || errno == ENOSYS) && rename(tmp, final_dir) == 0) goto done;
            if (errno == EEXIST || errno == ENOTEMPTY) goto exists;
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot rename into place: %s", final_dir,
                               strerror(errno));
        }
        goto done;
    }
exists:
    if (!force)
        return nmo_err_set(err, NMO_ERR_IO, "%s exists (use --force to replace it)", final_dir);
    if (rename2(tmp, final_dir, RENAME_EXCHANGE) == 0) {
        nmo_bundle_dir_remove(tmp); /* now holds the old bundle */
        goto done;
    }
    {
        /* no atomic exchange here: move the old one aside first (a window where the
         * bundle is absent, never partial) */
        char old[NMO_BPATH + 64];
        snprintf(old, sizeof old, "%s/.%s.old-%ld", parent, leaf, (long)getpid());
        nmo_bundle_dir_remove(old);
        if (rename(final_dir, old) != 0)
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot move aside: %s", final_dir, strerror(errno));
        if (rename(tmp, final_dir) != 0) {
            int e = errno;
            rename(old, final_dir);
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot rename into place: %s", final_dir,
                               strerror(e));
        }
        nmo_bundle_dir_remove(old);
    }
done:
    fsync_dir(parent);
    return NMO_OK;
}

void nmo_bundle_timestamp(char *buf, size_t n)
{
    time_t t = time(NULL);
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) {
        char *end;
        long long v = strtoll(sde, &end, 10);
        if (!*end && v >= 0) t = (time_t)v;
    }
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
