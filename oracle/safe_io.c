/* numoracle: file-system safety helpers — open only regular files for reading (a FIFO
 * never blocks the open), write device nodes and "-" directly instead of renaming a
 * temporary over them, and decide whether a path relative to a root stays inside it
 * before anything exists there (a dangling symlink is an escape). */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmo_internal.h"

int nmo__open_regular(const char *path, nmo_err *err)
{
    /* O_NONBLOCK: opening a FIFO with no writer would wait forever */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        nmo_err_set(err, NMO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        nmo_err_set(err, NMO_ERR_IO, "%s: not a regular file", path);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

FILE *nmo__fopen_regular(const char *path, nmo_err *err)
{
    int fd = nmo__open_regular(path, err);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        nmo_err_set(err, NMO_ERR_NOMEM, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int nmo__out_is_direct(const char *path)
{
    if (strcmp(path, "-") == 0) return 1;
    struct stat st;
    /* stat, not lstat: a symlink to /dev/null is written through as well */
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

nmo_status nmo__write_direct(const char *path, const void *data, size_t len, nmo_err *err)
{
    int out = strcmp(path, "-") == 0;
    int fd = out ? STDOUT_FILENO : open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (out) fflush(stdout);
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
    if (!out && close(fd) != 0 && !e) e = errno;
    if (e) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    return NMO_OK;
}

void nmo__path_norm(char *out, size_t n, const char *rel)
{
    size_t o = 0;
    if (n == 0) return;
    for (const char *p = rel; *p;) {
        size_t l = strcspn(p, "/");
        int skip = l == 0 || (l == 1 && p[0] == '.');
        if (!skip) {
            if (o && o + 1 < n) out[o++] = '/';
            for (size_t i = 0; i < l && o + 1 < n; i++) out[o++] = p[i];
        }
        p += l;
        while (*p == '/') p++;
    }
    out[o] = '\0';
}

int nmo__path_escapes(const char *root, const char *rel)
{
    if (rel[0] == '/') return 1;
    char real_root[PATH_MAX];
    if (!realpath(root, real_root)) return 1;
    size_t rl = strlen(real_root);
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s", root);
    for (const char *p = rel; *p;) {
        size_t l = strcspn(p, "/");
        if (l == 2 && p[0] == '.' && p[1] == '.') return 1;
        if (l && !(l == 1 && p[0] == '.')) {
            size_t pl = strlen(prefix);
            if (pl + 1 + l + 1 > sizeof prefix) return 1;
            prefix[pl] = '/';
            memcpy(prefix + pl + 1, p, l);
            prefix[pl + 1 + l] = '\0';
            struct stat st;
            if (lstat(prefix, &st) != 0) return 0; /* the rest does not exist yet */
            if (S_ISLNK(st.st_mode)) {
                /* a symlink must resolve, and inside the root: a dangling one would be
                 * created wherever it points */
                char rp[PATH_MAX];
                if (!realpath(prefix, rp)) return 1;
                if (strcmp(real_root, "/") != 0 &&
                    !(strncmp(rp, real_root, rl) == 0 && (rp[rl] == '/' || rp[rl] == '\0')))
                    return 1;
            }
        }
        p += l;
        while (*p == '/') p++;
    }
    return 0;
}

int nmo__dir_holds_dir(const char *dir, char *name, size_t n)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            found = 1;
            snprintf(name, n, "%s", e->d_name);
        }
    }
    closedir(d);
    return found;
}
