/* numoracle campaign: journal integrity — one writer per journal (flock), and a resume
 * that checks every line before trusting any (two writers once interleaved lines and
 * duplicated run ids silently). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include <cjson/cJSON.h>

#include "campaign/journal.h"

int nmo_camp_journal_lock(int fd)
{
    while (flock(fd, LOCK_EX | LOCK_NB) != 0)
        if (errno != EINTR) return -1;
    return 0;
}

typedef struct {
    char **v;
    size_t n, cap;
} idset;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

long nmo_camp_journal_verify(const char *text, char *why, size_t nwhy)
{
    static const char *const types[] = {"header", "note", "mutant", "run", "probe", NULL};
    idset ids = {0};
    long ln = 0, bad = 0;
    for (const char *p = text; *p && !bad;) {
        const char *nl = strchr(p, '\n');
        if (!nl) break; /* a torn last line: the caller drops it */
        ln++;
        size_t len = (size_t)(nl - p);
        char *line = malloc(len + 1);
        if (!line) {
            snprintf(why, nwhy, "out of memory");
            bad = ln;
            break;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        cJSON *j = cJSON_Parse(line);
        const cJSON *t = j ? cJSON_GetObjectItemCaseSensitive(j, "type") : NULL;
        int known = 0;
        for (int i = 0; cJSON_IsString(t) && types[i]; i++) known |= strcmp(t->valuestring, types[i]) == 0;
        if (!cJSON_IsObject(j)) {
            snprintf(why, nwhy, "not one JSON record: %.60s%s", line, len > 60 ? "..." : "");
            bad = ln;
        } else if (!known) {
            snprintf(why, nwhy, "no known \"type\": %.60s%s", line, len > 60 ? "..." : "");
            bad = ln;
        } else if (strcmp(t->valuestring, "run") == 0 || strcmp(t->valuestring, "probe") == 0) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
            if (!cJSON_IsString(id)) {
                snprintf(why, nwhy, "a %s record without an id", t->valuestring);
                bad = ln;
            } else {
                if (ids.n == ids.cap) {
                    size_t nc = ids.cap ? 2 * ids.cap : 256;
                    char **nv = realloc(ids.v, nc * sizeof *nv);
                    if (!nv) {
                        snprintf(why, nwhy, "out of memory");
                        bad = ln;
                    } else {
                        ids.v = nv;
                        ids.cap = nc;
                    }
                }
                if (!bad) {
                    /* key: type, id and the line number after a NUL-free separator */
                    size_t kl = strlen(t->valuestring) + strlen(id->valuestring) + 32;
                    char *k = malloc(kl);
                    if (k) snprintf(k, kl, "%s|%s\x01%ld", t->valuestring, id->valuestring, ln);
                    if (k) ids.v[ids.n++] = k;
                }
            }
        }
        cJSON_Delete(j);
        free(line);
        p = nl + 1;
    }
    if (!bad && ids.n > 1) {
        /* duplicates: sort by key (the line number follows \x01, which sorts before
         * any printable character, so equal ids are adjacent) */
        qsort(ids.v, ids.n, sizeof *ids.v, cmp_str);
        for (size_t i = 1; i < ids.n; i++) {
            const char *a = ids.v[i - 1], *b = ids.v[i];
            size_t la = (size_t)(strchr(a, '\x01') - a), lb = (size_t)(strchr(b, '\x01') - b);
            if (la == lb && memcmp(a, b, la) == 0) {
                long l1 = strtol(a + la + 1, NULL, 10), l2 = strtol(b + lb + 1, NULL, 10);
                long later = l1 > l2 ? l1 : l2, first = l1 > l2 ? l2 : l1;
                if (!bad || later < bad) {
                    bad = later;
                    snprintf(why, nwhy, "%.*s journaled again (first on line %ld)", (int)la, a, first);
                }
            }
        }
    }
    for (size_t i = 0; i < ids.n; i++) free(ids.v[i]);
    free(ids.v);
    return bad;
}
