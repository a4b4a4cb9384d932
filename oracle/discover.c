/* numoracle: bundle discovery, test names, filters and the pre-commit verifier
 * (RFC 0011 "Folder Convention", "Generic Test Runner", "Data Integrity").
 *
 * Discovery walks tier folders recursively in path order. A folder holding sweep.json
 * (or graph.template.json) is a template sweep: one case per sweep row, the folder not
 * descended. Anywhere else each graph .json (not *.meta.json) is a single-graph bundle.
 * Test names: single graphs use the graph content for the suite
 * ({Operation}_{layout}_{dtype}) and the bundle folder for the test; sweeps use
 * {Operation}_{TopologyName} from the location and the sanitized case id; tiers other
 * than quick prefix "Standard/", "Comprehensive/", "Full/". */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nmo_internal.h"

static const char *const tiers[NMO_TIER_COUNT] = {"quick", "standard", "comprehensive", "full"};
static const char *const tier_prefix[NMO_TIER_COUNT] = {"", "Standard/", "Comprehensive/", "Full/"};

const char *nmo_tier_name(int tier) { return tier >= 0 && tier < NMO_TIER_COUNT ? tiers[tier] : "?"; }

int nmo_tier_parse(const char *name)
{
    for (int i = 0; name && i < NMO_TIER_COUNT; i++)
        if (strcmp(name, tiers[i]) == 0) return i;
    return -1;
}

void nmo_sanitize(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) *s = '_';
}

static int glob_any(const char *list, const char *name)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save))
        if (fnmatch(p, name, 0) == 0) return 1;
    return 0;
}

int nmo_filter_match(const char *filter, const char *name)
{
    if (!filter || !*filter) return 1;
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", filter);
    char *neg = strchr(pos, '-');
    if (neg) *neg++ = '\0';
    if (pos[0] && !glob_any(pos, name)) return 0;
    if (neg && *neg && glob_any(neg, name)) return 0;
    return 1;
}

/* ---- discovery -------------------------------------------------------------------- */

typedef struct {
    nmo_disc *d;
    nmo_diag_fn diag;
    void *ctx;
    unsigned flags;
    int tier;
    const char *tier_dir;
    char root_real[PATH_MAX];   /* the data root, resolved: followed links stay inside */
    struct { dev_t dev; ino_t ino; } *seen; /* directories scanned (a link is a loop or an alias) */
    int nseen, capseen;
} walker;

/* 1 when dir was scanned already (else it is recorded); -1 on no memory. */
static int seen_dir(walker *w, const struct stat *st)
{
    for (int i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino) return 1;
    if (w->nseen == w->capseen) {
        int nc = w->capseen ? 2 * w->capseen : 64;
        void *q = realloc(w->seen, (size_t)nc * sizeof *w->seen);
        if (!q) return -1;
        w->seen = q;
        w->capseen = nc;
    }
    w->seen[w->nseen].dev = st->st_dev;
    w->seen[w->nseen].ino = st->st_ino;
    w->nseen++;
    return 0;
}

static void say(walker *w, nmo_diag_level l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(walker *w, nmo_diag_level l, const char *fmt, ...)
{
    if (!w->diag) return;
    char m[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    w->diag(w->ctx, l, m);
}

static nmo_disc_case *add_case(nmo_disc *d)
{
    if (d->n == d->cap) {
        int nc = d->cap ? 2 * d->cap : 64;
        nmo_disc_case *p = realloc(d->cases, (size_t)nc * sizeof *p);
        if (!p) return NULL;
        d->cases = p;
        d->cap = nc;
    }
    nmo_disc_case *c = &d->cases[d->n++];
    memset(c, 0, sizeof *c);
    c->sweep = -1;
    return c;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int entry_filter(const struct dirent *e) { return e->d_name[0] != '.'; }

/* path components of dir below the tier folder */
static int rel_parts(const char *tier_dir, const char *dir, char parts[8][128])
{
    size_t tl = strlen(tier_dir);
    const char *r = strncmp(dir, tier_dir, tl) == 0 ? dir + tl : dir;
    int n = 0;
    while (*r && n < 8) {
        while (*r == '/') r++;
        size_t l = strcspn(r, "/");
        if (!l) break;
        snprintf(parts[n++], 128, "%.*s", (int)l, r);
        r += l;
    }
    return n;
}

static void leaf_of(char *out, size_t n, const char *dir)
{
    const char *s = strrchr(dir, '/');
    snprintf(out, n, "%s", s ? s + 1 : dir);
}

static void name_case(walker *w, nmo_disc_case *c, const char *suite, const char *test)
{
    char t[200];
    char su[200];
    snprintf(su, sizeof su, "%s", suite);
    snprintf(t, sizeof t, "%s", test);
    nmo_sanitize(su);
    nmo_sanitize(t);
    snprintf(c->name, sizeof c->name, "%s%s.%s", tier_prefix[w->tier], su, t);
    c->tier = w->tier;
}

static void scan_sweep(walker *w, const char *dir)
{
    nmo_disc *d = w->d;
    if (d->n_sweeps == d->sweeps_cap) {
        int nc = d->sweeps_cap ? 2 * d->sweeps_cap : 16;
        nmo_sweep *p = realloc(d->sweeps, (size_t)nc * sizeof *p);
        if (!p) return;
        d->sweeps = p;
        d->sweeps_cap = nc;
    }
    nmo_sweep *s = &d->sweeps[d->n_sweeps];
    nmo_err e;
    char suite[300];
    if (nmo_sweep_load(s, dir, w->diag, w->ctx, &e) != NMO_OK) {
        /* the whole sweep is unusable: one failing case keeps the signal */
        char op[128], topo[128];
        char parts[8][128];
        int np = rel_parts(w->tier_dir, dir, parts);
        snprintf(op, sizeof op, "%s", np >= 2 ? parts[np - 2] : "unknown");
        snprintf(topo, sizeof topo, "%s", np >= 1 ? parts[np - 1] : "unknown");
        nmo_disc_case *c = add_case(d);
        if (!c) return;
        snprintf(suite, sizeof suite, "%s_%s", op, topo);
        name_case(w, c, suite, "sweep");
        nmo__join(c->src, sizeof c->src, dir, "sweep.json");
        c->kind = NMO_BK_SWEEP;
        snprintf(c->error, sizeof c->error, "%s", e.msg);
        return;
    }
    d->n_sweeps++;
    snprintf(suite, sizeof suite, "%s_%s", s->operation, s->topology);
    for (int i = 0; i < s->n_cases; i++) {
        nmo_disc_case *c = add_case(d);
        if (!c) return;
        name_case(w, c, suite, s->cases[i].id);
        snprintf(c->src, sizeof c->src, "%s", s->path);
        c->kind = NMO_BK_SWEEP;
        c->sweep = d->n_sweeps - 1;
        c->idx = i;
        if (s->cases[i].error[0]) snprintf(c->error, sizeof c->error, "%s", s->cases[i].error);
    }
}

static void scan_dir(walker *w, const char *dir)
{
    struct stat dst;
    if (stat(dir, &dst) != 0 || seen_dir(w, &dst) != 0) return;
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, entry_filter, alphasort);
    if (n < 0) return;
    int sweep = 0, nbin = 0;
    for (int i = 0; i < n; i++) {
        sweep |= strcmp(ents[i]->d_name, "sweep.json") == 0 || strcmp(ents[i]->d_name, "graph.template.json") == 0;
        nbin += ends_with(ents[i]->d_name, ".bin");
    }
    if (sweep) {
        scan_sweep(w, dir);
        goto out;
    }
    {
        char graphs[8][NMO_BPATH];
        int ng = 0, extra = 0, broken = 0;
        char broken_msg[512] = "";
        for (int i = 0; i < n; i++) {
            const char *nm = ents[i]->d_name;
            if (!ends_with(nm, ".json") || ends_with(nm, ".meta.json")) continue;
            char p[NMO_BPATH];
            nmo__join(p, sizeof p, dir, nm);
            struct stat st;
            if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
            nmo_err e;
            cJSON *j = nmo__read_json(p, &e);
            if (!j) {
                if (nbin) {
                    /* a bundle whose graph does not parse: fail its case */
                    broken = 1;
                    snprintf(broken_msg, sizeof broken_msg, "%s", e.msg);
                    if (ng < 8) snprintf(graphs[ng++], NMO_BPATH, "%s", p);
                } else {
                    say(w, NMO_DIAG_WARN, "%s; skipped", e.msg);
                }
                continue;
            }
            if (!nmo__is_graph_json(j)) {
                say(w, NMO_DIAG_WARN, "%s: not a graph JSON (no \"tensors\" or \"nodes\"); ignored", p);
                cJSON_Delete(j);
                continue;
            }
            cJSON_Delete(j);
            if (ng < 8) snprintf(graphs[ng++], NMO_BPATH, "%s", p);
            else extra++;
        }
        if (ng > 0) {
            nmo_disc_case *c = add_case(w->d);
            if (!c) goto out;
            char leaf[256], suite[400], op[128] = "unknown", lay[32] = "unknown", dt[32] = "unknown";
            leaf_of(leaf, sizeof leaf, dir);
            cJSON *j = broken ? NULL : nmo__read_json(graphs[0], NULL);
            if (j) {
                nmo__graph_name_tokens(j, op, sizeof op, lay, sizeof lay, dt, sizeof dt);
                cJSON_Delete(j);
            } else {
                char parts[8][128];
                int np = rel_parts(w->tier_dir, dir, parts);
                if (np >= 4) {
                    snprintf(op, sizeof op, "%s", parts[np - 4]);
                    snprintf(lay, sizeof lay, "%s", parts[np - 3]);
                    snprintf(dt, sizeof dt, "%s", parts[np - 2]);
                }
            }
            snprintf(suite, sizeof suite, "%s_%s_%s", op, lay, dt);
            name_case(w, c, suite, leaf);
            snprintf(c->src, sizeof c->src, "%s", graphs[0]);
            c->kind = NMO_BK_SINGLE;
            if (broken) snprintf(c->error, sizeof c->error, "%s", broken_msg);
            if (ng + extra > 1) {
                char list[600] = "";
                size_t off = 0;
                for (int i = 0; i < ng && off < sizeof list; i++) {
                    const char *s = strrchr(graphs[i], '/');
                    off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? " " : "", s ? s + 1 : graphs[i]);
                }
                snprintf(c->error, sizeof c->error, "%s: %d graph .json files in one bundle directory (%s); a bundle holds exactly one",
                         dir, ng + extra, list);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        char p[NMO_BPATH];
        nmo__join(p, sizeof p, dir, ents[i]->d_name);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            scan_dir(w, p);
        } else if (S_ISLNK(st.st_mode)) {
            /* a symlinked bundle directory is followed when it resolves inside the data
             * root (each directory is scanned once: an alias or a loop adds nothing);
             * else it is a warning, never a silent skip (issue 16.12) */
            char real[PATH_MAX];
            struct stat ts;
            if (!realpath(p, real) || stat(real, &ts) != 0) {
                say(w, NMO_DIAG_WARN, "%s: symlink that does not resolve; skipped", p);
                continue;
            }
            if (!S_ISDIR(ts.st_mode)) continue;
            size_t rl = strlen(w->root_real);
            if (strncmp(real, w->root_real, rl) != 0 || (real[rl] != '/' && real[rl] != '\0'))
                say(w, NMO_DIAG_WARN, "%s: symlinked directory resolves outside the data root (%s); not followed", p, real);
            else
                scan_dir(w, p);
        }
    }
out:
    for (int i = 0; i < n; i++) free(ents[i]);
    free(ents);
}

static int cmp_idx(const void *a, const void *b, void *ctx)
{
    const nmo_disc *d = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(d->cases[x].name, d->cases[y].name);
    return c ? c : x - y;
}

nmo_status nmo_discover(nmo_disc *d, const char *root, int max_tier, unsigned flags, nmo_diag_fn diag, void *ctx,
                        nmo_err *err)
{
    memset(d, 0, sizeof *d);
    if (!nmo__is_dir(root)) return nmo_err_set(err, NMO_ERR_IO, "golden data dir '%s' does not exist", root);
    walker w = {d, diag, ctx, flags, 0, root, "", NULL, 0, 0};
    if (!realpath(root, w.root_real)) return nmo_err_set(err, NMO_ERR_IO, "golden data dir '%s': %s", root, strerror(errno));
    /* top level: tier folders; anything else is most likely a typo */
    struct dirent **ents = NULL;
    int n = scandir(root, &ents, entry_filter, alphasort);
    for (int i = 0; i < n; i++) {
        char p[NMO_BPATH];
        nmo__join(p, sizeof p, root, ents[i]->d_name);
        if (nmo__is_dir(p)) {
            if (nmo_tier_parse(ents[i]->d_name) < 0)
                say(&w, NMO_DIAG_WARN, "%s: unexpected top-level directory (tiers: quick standard comprehensive full)", p);
        } else if (ends_with(ents[i]->d_name, ".json")) {
            say(&w, NMO_DIAG_WARN, "%s: not in a tier folder; ignored", p);
        }
        free(ents[i]);
    }
    free(ents);
    for (int t = 0; t <= max_tier && t < NMO_TIER_COUNT; t++) {
        char td[NMO_BPATH];
        nmo__join(td, sizeof td, root, tiers[t]);
        if (!nmo__is_dir(td)) continue; /* a missing tier is zero cases */
        d->n_dirs++;
        w.tier = t;
        w.tier_dir = td;
        scan_dir(&w, td);
    }
    free(w.seen);
    /* collisions: equal sanitized names from two sources (duplicate sweep ids included) */
    if (d->n > 1) {
        int *ix = malloc((size_t)d->n * sizeof(int));
        if (!ix) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        for (int i = 0; i < d->n; i++) ix[i] = i;
        qsort_r(ix, (size_t)d->n, sizeof(int), cmp_idx, d);
        for (int i = 1; i < d->n; i++) {
            nmo_disc_case *a = &d->cases[ix[i - 1]], *b = &d->cases[ix[i]];
            if (strcmp(a->name, b->name) != 0) continue;
            char m[2 * NMO_BPATH + 512];
            if (a->kind == NMO_BK_SWEEP && b->kind == NMO_BK_SWEEP && a->sweep == b->sweep && a->sweep >= 0)
                snprintf(m, sizeof m, "test name collision: %s from %s cases[%d] and cases[%d] (duplicate case id)", a->name,
                         a->src, a->idx, b->idx);
            else
                snprintf(m, sizeof m, "test name collision: %s from %s and from %s", a->name, a->src, b->src);
            if (!(flags & NMO_DISC_CONTINUE)) {
                free(ix);
                nmo_err_set(err, NMO_ERR_DATA, "%s", m);
                return NMO_ERR_DATA;
            }
            if (diag) diag(ctx, NMO_DIAG_ERROR, m);
            snprintf(b->error, sizeof b->error, "%s", m);
        }
        free(ix);
    }
    return NMO_OK;
}

void nmo_disc_free(nmo_disc *d)
{
    for (int i = 0; i < d->n_sweeps; i++) nmo_sweep_free(&d->sweeps[i]);
    free(d->sweeps);
    free(d->cases);
    memset(d, 0, sizeof *d);
}

nmo_status nmo_disc_load(nmo_bundle *b, const nmo_disc *d, int i, unsigned flags, nmo_err *err)
{
    const nmo_disc_case *c = &d->cases[i];
    memset(b, 0, sizeof *b);
    if (c->error[0]) return nmo_err_set(err, NMO_ERR_DATA, "%s", c->error);
    if (c->kind == NMO_BK_SWEEP) return nmo_sweep_case_load(b, &d->sweeps[c->sweep], c->idx, flags, err);
    return nmo_bundle_load(b, c->src, flags, err);
}

/* ---- the pre-commit verifier -------------------------------------------------------- */

typedef struct {
    nmo_verify_summary *sum;
    nmo_diag_fn diag;
    void *ctx;
} vctx;

static void vdiag(void *p, nmo_diag_level l, const char *msg)
{
    vctx *v = p;
    if (l == NMO_DIAG_ERROR) v->sum->errors++;
    else if (l == NMO_DIAG_SKIP) v->sum->skipped++;
    else v->sum->warnings++;
    if (v->diag) v->diag(v->ctx, l, msg);
}

static void vsay(vctx *v, nmo_diag_level l, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vsay(vctx *v, nmo_diag_level l, const char *fmt, ...)
{
    char m[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    vdiag(v, l, m);
}

static int64_t bin_bytes(const char *dir)
{
    int64_t tot = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[NMO_BPATH];
        nmo__join(p, sizeof p, dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) tot += bin_bytes(p);
        else if (ends_with(e->d_name, ".bin")) tot += (int64_t)st.st_size;
    }
    closedir(d);
    return tot;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double mb(int64_t b) { return (double)b / (1024.0 * 1024.0); }

/* Forward-backward consistency (RFC check 8): the backward bundle's forward_source must
 * exist and, when the forward bundle is found, agree with its metadata. */
static void check_backward(vctx *v, const char *root, const nmo_disc_case *dc, const nmo_bundle *b)
{
    const char *where = b->meta_path[0] ? b->meta_path : b->graph_path;
    if (!b->meta) {
        vsay(v, NMO_DIAG_ERROR, "%s: backward bundle without .meta.json (forward_source is required)", b->graph_path);
        return;
    }
    const cJSON *fs = cJSON_GetObjectItemCaseSensitive(b->meta, "forward_source");
    if (!fs) {
        vsay(v, NMO_DIAG_ERROR, "%s: backward bundle without forward_source (RFC 0011 forward-backward constraint)", where);
        return;
    }
    const char *method = jstr(fs, "method"), *ver = jstr(fs, "version"), *at = jstr(fs, "generated_at");
    if (!cJSON_IsObject(fs) || !method || !ver || !at) {
        vsay(v, NMO_DIAG_ERROR, "%s: forward_source needs method, version and generated_at", where);
        return;
    }
    /* the forward bundle: forward_source.bundle (relative to the data root), else the
     * sibling path with the forward operation */
    char fwd[NMO_BPATH * 2] = "";
    const char *rel = jstr(fs, "bundle");
    if (rel) {
        char dir[NMO_BPATH * 2], leaf[256];
        nmo__join(dir, sizeof dir, root, rel);
        const char *sl = strrchr(rel, '/');
        snprintf(leaf, sizeof leaf, "%s.meta.json", sl ? sl + 1 : rel);
        nmo__join(fwd, sizeof fwd, dir, leaf);
    } else if (dc->kind == NMO_BK_SINGLE && b->g.op) {
        const nmo_op *fo = nmo_op_forward(b->g.op);
        char bo[160], fop[160];
        nmo_op_operation(bo, sizeof bo, b->g.op);
        if (fo) {
            nmo_op_operation(fop, sizeof fop, fo);
            const char *p = strstr(b->meta_path, bo);
            if (p) snprintf(fwd, sizeof fwd, "%.*s%s%s", (int)(p - b->meta_path), b->meta_path, fop, p + strlen(bo));
        }
    }
    if (!fwd[0] || !nmo__exists(fwd)) {
        vsay(v, NMO_DIAG_WARN, "%s: forward bundle not found; forward_source not cross-checked", where);
        return;
    }
    cJSON *fm = nmo__read_json(fwd, NULL);
    if (!fm) {
        vsay(v, NMO_DIAG_ERROR, "%s: not valid JSON (forward bundle metadata)", fwd);
        return;
    }
    const char *fm_m = jstr(fm, "generator"), *fm_v = jstr(fm, "generator_version"), *fm_at = jstr(fm, "generated_at");
    if (!fm_m || strcmp(fm_m, method) != 0)
        vsay(v, NMO_DIAG_ERROR, "%s: forward_source method '%s' does not match the forward bundle %s ('%s'): stale backward bundle",
             where, method, fwd, fm_m ? fm_m : "");
    else if (!fm_v || strcmp(fm_v, ver) != 0)
        vsay(v, NMO_DIAG_ERROR, "%s: forward_source version '%s' does not match the forward bundle %s ('%s'): stale backward bundle",
             where, ver, fwd, fm_v ? fm_v : "");
    else if (!fm_at || strcmp(fm_at, at) != 0)
        vsay(v, NMO_DIAG_ERROR,
             "%s: forward_source generated_at '%s' does not match the forward bundle %s ('%s'): stale backward bundle", where, at,
             fwd, fm_at ? fm_at : "");
    cJSON_Delete(fm);
}

/* stray .bin files in a single-graph bundle directory */
static void check_stray(vctx *v, const nmo_bundle *b)
{
    DIR *d = opendir(b->dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".bin")) continue;
        int known = 0;
        for (int i = 0; i < b->g.n_tensors && !known; i++) {
            static const char *const sfx[4] = {"", ".lo", ".hi", ".flags"};
            for (int q = 0; q < 4; q++) {
                char nm[400];
                snprintf(nm, sizeof nm, "%s.tensor%lld%s.bin", b->base, (long long)b->g.t[i].uid, sfx[q]);
                known |= strcmp(nm, e->d_name) == 0;
            }
        }
        if (!known) {
            char p[NMO_BPATH + 300];
            nmo__join(p, sizeof p, b->dir, e->d_name);
            vsay(v, NMO_DIAG_WARN, "%s: not a tensor file of %s; ignored", p, b->graph_path);
        }
    }
    closedir(d);
}

void nmo_verify_tree(nmo_verify_summary *sum, const char *root, const nmo_verify_opts *opts, nmo_diag_fn diag, void *ctx)
{
    memset(sum, 0, sizeof *sum);
    nmo_verify_opts o = {2 * 1024 * 1024, 800LL * 1024 * 1024};
    if (opts) {
        if (opts->case_warn_bytes > 0) o.case_warn_bytes = opts->case_warn_bytes;
        if (opts->total_fail_bytes > 0) o.total_fail_bytes = opts->total_fail_bytes;
    }
    vctx v = {sum, diag, ctx};
    nmo_disc d;
    nmo_err e;
    /* checks 4 (tier folders), 5 (stray .json), 6 (sweep rules) and collisions */
    if (nmo_discover(&d, root, NMO_TIER_COUNT - 1, NMO_DISC_CONTINUE, vdiag, &v, &e) != NMO_OK) {
        vsay(&v, NMO_DIAG_ERROR, "%s", e.msg);
        return;
    }
    sum->sweeps = d.n_sweeps;
    for (int i = 0; i < d.n; i++) {
        const nmo_disc_case *dc = &d.cases[i];
        sum->cases++;
        if (dc->kind == NMO_BK_SINGLE) sum->bundles++;
        if (dc->error[0]) {
            /* collisions were reported by discovery already */
            if (strncmp(dc->error, "test name collision", 19) != 0) vsay(&v, NMO_DIAG_ERROR, "%s", dc->error);
            continue;
        }
        /* checks 1 (sizes), 2/3 (NaN/Inf), 7 (missing .bin) and the bound tensors */
        nmo_bundle b;
        nmo_status ls = nmo_disc_load(&b, &d, i, 0, &e);
        if (ls != NMO_OK) {
            /* an operation numoracle does not model: the same SKIP as run's, not an error */
            if (ls == NMO_ERR_UNKNOWN_OP) vsay(&v, NMO_DIAG_SKIP, "%s: %s", dc->name, e.msg);
            else vsay(&v, NMO_DIAG_ERROR, "%s", e.msg);
            continue;
        }
        if (b.meta) {
            static const char *const req[3] = {"generator", "reference_source", "reference_strategy"};
            for (int q = 0; q < 3; q++)
                if (!jstr(b.meta, req[q])) vsay(&v, NMO_DIAG_ERROR, "%s: missing required field '%s'", b.meta_path, req[q]);
            /* the tolerance run would use (absolute -1 or relative inf is refused there) */
            nmo_tol tol;
            int found = 0;
            if (nmo_tol_from_meta(&tol, &found, b.meta, b.meta_path, &e) != NMO_OK) vsay(&v, NMO_DIAG_ERROR, "%s", e.msg);
            /* a graph retargeted to another operation than its metadata describes */
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(b.meta, "numoracle");
            const char *mop = jstr(nm, "op");
            if (mop && b.g.op && strcmp(mop, b.g.op->name) != 0)
                vsay(&v, NMO_DIAG_ERROR, "%s: the graph is operation %s, its metadata (numoracle.op) says %s", b.meta_path,
                     b.g.op->name, mop);
            const char *mopn = jstr(b.meta, "operation");
            cJSON *gj = mopn && dc->kind == NMO_BK_SINGLE ? nmo__read_json(dc->src, NULL) : NULL;
            if (gj) {
                char gop[128] = "", lay[32], gdt[32];
                nmo__graph_name_tokens(gj, gop, sizeof gop, lay, sizeof lay, gdt, sizeof gdt);
                cJSON_Delete(gj);
                /* the same operator under its older name (BatchnormInferenceFwd) is no conflict */
                const nmo_op *go = nmo__op_lookup(gop);
                if (strcmp(gop, mopn) != 0 && !(go && go == nmo__op_lookup(mopn)))
                    vsay(&v, NMO_DIAG_ERROR, "%s: the graph %s is operation %s, its metadata (operation) says %s", b.meta_path,
                         dc->src, gop, mopn);
            }
        }
        if (b.g.op && nmo_op_is_backward(b.g.op)) check_backward(&v, root, dc, &b); /* check 8 */
        if (dc->kind == NMO_BK_SINGLE) check_stray(&v, &b);
        /* check 9, per case */
        if (b.payload_bytes > o.case_warn_bytes)
            vsay(&v, NMO_DIAG_WARN, "%s: case %s tensor payload %.2f MB exceeds the %g MB per-case budget (needs a rationale in review)",
                 b.dir, dc->name, mb(b.payload_bytes), mb(o.case_warn_bytes));
        if (b.payload_bytes > sum->largest) {
            sum->largest = b.payload_bytes;
            snprintf(sum->largest_name, sizeof sum->largest_name, "%s", dc->name);
        }
        nmo_bundle_free(&b);
    }
    /* check 9, aggregate: every tensor file committed under the tier folders */
    for (int t = 0; t < NMO_TIER_COUNT; t++) {
        char td[NMO_BPATH];
        nmo__join(td, sizeof td, root, tiers[t]);
        sum->payload += bin_bytes(td);
    }
    if (sum->payload > o.total_fail_bytes)
        vsay(&v, NMO_DIAG_ERROR, "%s: total tensor payload %.2f MB exceeds the %g MB budget", root, mb(sum->payload),
             mb(o.total_fail_bytes));
    nmo_disc_free(&d);
}
