/* numoracle: compressed template sweeps (RFC 0011 "Compressed Template Sweeps") —
 * graph.template.json + sweep.json + golden/{CaseId}/, ${case.…} placeholders, and every
 * validation rule of the RFC:
 *   duplicate case ids (an error naming both), ids that are not lowercase_snake_case or
 *   lack the dtype/layout/feature token of a field that varies across the sweep, missing
 *   placeholder values, unused values (warnings), duplicate tensor uids within a case,
 *   case uids not in the template, cases that omit or add template uids, tensor and
 *   node-attribute placeholders without matching case entries, a non-null golden without
 *   golden.path (or one escaping the sweep), and each expanded case validating as a
 *   single-graph bundle before it is registered.
 * Placeholders: a JSON string that is exactly "${case.X}" becomes the value (any JSON
 * type); inside longer text the value is spliced in as text. Inside a tensor object,
 * ${case.tensors.F} (or ${case.F} for F in dims/strides/data_type) reads the case's
 * values.tensors entry with that tensor's uid; ${case.attributes.F} reads
 * values.attributes; any other ${case.F} reads values.F. Uids and tensor wiring cannot be
 * placeholders: the topology is fixed. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_internal.h"

#define NMO_BL_REQUIRE_DATA (1u << 8)

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void base_name(char *out, size_t n, const char *path)
{
    char buf[NMO_BPATH];
    snprintf(buf, sizeof buf, "%s", path);
    size_t l = strlen(buf);
    while (l > 1 && buf[l - 1] == '/') buf[--l] = '\0';
    const char *s = strrchr(buf, '/');
    snprintf(out, n, "%s", s ? s + 1 : buf);
}

static void parent_name(char *out, size_t n, const char *path)
{
    char buf[NMO_BPATH];
    snprintf(buf, sizeof buf, "%s", path);
    size_t l = strlen(buf);
    while (l > 1 && buf[l - 1] == '/') buf[--l] = '\0';
    char *s = strrchr(buf, '/');
    if (!s) {
        snprintf(out, n, "unknown");
        return;
    }
    *s = '\0';
    base_name(out, n, buf[0] ? buf : "/");
    if (strcmp(out, ".") == 0 || strcmp(out, "..") == 0) snprintf(out, n, "unknown");
}

static int snake_case(const char *s)
{
    if (!(*s >= 'a' && *s <= 'z')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* Is tok one of id's '_'-separated tokens? */
static int has_token(const char *id, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = id; *p;) {
        size_t l = strcspn(p, "_");
        if (l == n && strncmp(p, tok, n) == 0) return 1;
        p += l;
        if (*p) p++;
    }
    /* compound tokens such as fp8_e4m3 span separators */
    const char *q = strstr(id, tok);
    while (q) {
        if ((q == id || q[-1] == '_') && (q[n] == '\0' || q[n] == '_')) return 1;
        q = strstr(q + 1, tok);
    }
    return 0;
}

/* ---- expansion ----------------------------------------------------------------------- */

typedef struct {
    const char *path, *id;
    const cJSON *values, *attrs, *tensors;
    char *err;
    size_t errn;
    /* usage marks for the unused-value warnings */
    int used_top[64];
    int used_attr[64];
    int used_tf[NMO_GRAPH_MAX_TENSORS][16];
} xctx;

static int index_of(const cJSON *obj, const cJSON *item)
{
    int i = 0;
    for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next, i++)
        if (c == item) return i;
    return -1;
}

static const cJSON *case_tensor(const xctx *x, int64_t uid, int *pos)
{
    int i = 0;
    for (const cJSON *t = x->tensors ? x->tensors->child : NULL; t; t = t->next, i++) {
        int64_t u;
        if (nmo__json_int(cJSON_GetObjectItemCaseSensitive(t, "uid"), 0, INT64_MAX / 2, &u) && u == uid) {
            if (pos) *pos = i;
            return t;
        }
    }
    return NULL;
}

/* Resolve placeholder name (after "case.") in tensor context uid (-1: none). */
static const cJSON *resolve(xctx *x, const char *name, int64_t uid)
{
    const char *f = NULL;
    if (strncmp(name, "tensors.", 8) == 0) f = name + 8;
    else if (uid >= 0 && (!strcmp(name, "dims") || !strcmp(name, "strides") || !strcmp(name, "data_type")))
        f = name;
    if (f) {
        if (uid < 0) {
            snprintf(x->err, x->errn, "%s: case '%s': placeholder ${case.%s} outside a tensor object", x->path, x->id, name);
            return NULL;
        }
        int pos = -1;
        const cJSON *te = case_tensor(x, uid, &pos);
        const cJSON *v = te ? cJSON_GetObjectItemCaseSensitive(te, f) : NULL;
        if (!te)
            snprintf(x->err, x->errn, "%s: case '%s': placeholder ${case.%s} of tensor uid %lld has no values.tensors entry",
                     x->path, x->id, name, (long long)uid);
        else if (!v)
            snprintf(x->err, x->errn, "%s: case '%s': placeholder ${case.%s} of tensor uid %lld: the values.tensors entry has no '%s'",
                     x->path, x->id, name, (long long)uid, f);
        else if (pos >= 0 && pos < NMO_GRAPH_MAX_TENSORS) {
            int fi = index_of(te, v);
            if (fi >= 0 && fi < 16) x->used_tf[pos][fi] = 1;
        }
        return v;
    }
    if (strncmp(name, "attributes.", 11) == 0) {
        const cJSON *v = x->attrs ? cJSON_GetObjectItemCaseSensitive(x->attrs, name + 11) : NULL;
        if (!v)
            snprintf(x->err, x->errn, "%s: case '%s': placeholder ${case.%s} has no value in values.attributes", x->path,
                     x->id, name);
        else {
            int i = index_of(x->attrs, v);
            if (i >= 0 && i < 64) x->used_attr[i] = 1;
        }
        return v;
    }
    const cJSON *v = x->values ? cJSON_GetObjectItemCaseSensitive(x->values, name) : NULL;
    if (!v) snprintf(x->err, x->errn, "%s: case '%s': placeholder ${case.%s} has no value", x->path, x->id, name);
    else {
        int i = index_of(x->values, v);
        if (i >= 0 && i < 64) x->used_top[i] = 1;
    }
    return v;
}

/* Substitute inside string item s; returns the replacement item (new) or NULL on error. */
static cJSON *subst_string(xctx *x, const char *s, int64_t uid)
{
    const char *p = strstr(s, "${case.");
    const char *e = p ? strchr(p, '}') : NULL;
    if (!p) return cJSON_CreateString(s);
    if (!e) {
        snprintf(x->err, x->errn, "%s: case '%s': unterminated placeholder in '%s'", x->path, x->id, s);
        return NULL;
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(e - p - 7), p + 7);
    if (p == s && e[1] == '\0') { /* the whole string: typed substitution */
        const cJSON *v = resolve(x, name, uid);
        return v ? cJSON_Duplicate(v, 1) : NULL;
    }
    /* text splice, one placeholder at a time */
    size_t cap = strlen(s) + 256, off = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    const char *q = s;
    while ((p = strstr(q, "${case."))) {
        e = strchr(p, '}');
        if (!e) {
            snprintf(x->err, x->errn, "%s: case '%s': unterminated placeholder in '%s'", x->path, x->id, s);
            free(out);
            return NULL;
        }
        snprintf(name, sizeof name, "%.*s", (int)(e - p - 7), p + 7);
        const cJSON *v = resolve(x, name, uid);
        if (!v) {
            free(out);
            return NULL;
        }
        char val[128];
        if (cJSON_IsString(v)) snprintf(val, sizeof val, "%s", v->valuestring);
        else if (cJSON_IsNumber(v)) snprintf(val, sizeof val, "%.17g", v->valuedouble);
        else {
            snprintf(x->err, x->errn, "%s: case '%s': placeholder ${case.%s} inside text needs a string or number", x->path,
                     x->id, name);
            free(out);
            return NULL;
        }
        size_t need = off + (size_t)(p - q) + strlen(val) + strlen(e) + 1;
        if (need > cap) {
            cap = need * 2;
            char *n2 = realloc(out, cap);
            if (!n2) {
                free(out);
                return NULL;
            }
            out = n2;
        }
        memcpy(out + off, q, (size_t)(p - q));
        off += (size_t)(p - q);
        memcpy(out + off, val, strlen(val));
        off += strlen(val);
        q = e + 1;
    }
    snprintf(out + off, cap - off, "%s", q);
    cJSON *r = cJSON_CreateString(out);
    free(out);
    return r;
}

/* cJSON_ReplaceItemViaPointer drops the key: carry it over */
static void replace_keep_key(cJSON *parent, cJSON *old, cJSON *r)
{
    if (r->string && !(r->type & cJSON_StringIsConst)) cJSON_free(r->string);
    r->string = old->string ? strdup(old->string) : NULL;
    r->type &= ~cJSON_StringIsConst;
    cJSON_ReplaceItemViaPointer(parent, old, r);
}

/* Walk item in place; uid: tensor context. Returns 0 on error (x->err set). */
static int expand(xctx *x, cJSON *item, int64_t uid)
{
    for (cJSON *c = item->child; c;) {
        cJSON *next = c->next;
        if (cJSON_IsString(c) && strstr(c->valuestring, "${case.")) {
            cJSON *r = subst_string(x, c->valuestring, uid);
            if (!r) {
                if (!x->err[0]) snprintf(x->err, x->errn, "%s: case '%s': out of memory", x->path, x->id);
                return 0;
            }
            replace_keep_key(item, c, r);
        } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            if (!expand(x, c, uid)) return 0;
        }
        c = next;
    }
    return 1;
}

/* Placeholders may not touch identity or wiring: uids and *_tensor_uid values. */
static int wiring_placeholder(const cJSON *j, char *key, size_t n)
{
    for (const cJSON *c = j ? j->child : NULL; c; c = c->next) {
        if (c->string && cJSON_IsString(c) && strstr(c->valuestring, "${case.")) {
            size_t l = strlen(c->string);
            if (strcmp(c->string, "uid") == 0 || strcmp(c->string, "virtual") == 0 ||
                (l > 11 && strcmp(c->string + l - 11, "_tensor_uid") == 0)) {
                snprintf(key, n, "%s", c->string);
                return 1;
            }
        }
        if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && wiring_placeholder(c, key, n)) return 1;
    }
    return 0;
}

static void case_err(nmo_sweep_case *sc, const char *fmt, const char *path, const char *a, const char *b)
{
    if (sc->error[0]) return;
    snprintf(sc->error, sizeof sc->error, fmt, path, a, b);
}

/* dtype signature of an expanded graph (io_data_type, else the tensors' types) */
static void dtype_sig(const cJSON *g, char *out, size_t n, char tok[4][32], int *ntok)
{
    *ntok = 0;
    out[0] = '\0';
    const char *io = jstr(g, "io_data_type");
    int dt;
    if (io && nmo_dt_parse(&dt, io) == NMO_OK) {
        snprintf(out, n, "%s", nmo_dt_token(dt));
        snprintf(tok[(*ntok)++], 32, "%s", nmo_dt_token(dt));
        return;
    }
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(g, "tensors");
    for (const cJSON *t = ts ? ts->child : NULL; t; t = t->next) {
        const char *d = jstr(t, "data_type");
        if (!d || nmo_dt_parse(&dt, d) != NMO_OK) continue;
        const char *tk = nmo_dt_token(dt);
        int seen = 0;
        for (int i = 0; i < *ntok; i++) seen |= strcmp(tok[i], tk) == 0;
        if (!seen && *ntok < 4) {
            snprintf(tok[(*ntok)++], 32, "%s", tk);
            size_t l = strlen(out);
            snprintf(out + l, n - l, "%s%s", l ? "+" : "", tk);
        }
    }
}

/* the dtype token, or numoracle's own name for it (bfp16 and bf16 both accepted) */
static int has_dtype_token(const char *id, const char *tk)
{
    if (has_token(id, tk)) return 1;
    if (strcmp(tk, "bfp16") == 0) return has_token(id, "bf16");
    return 0;
}

/* The case directory of golden.path gp relative to the sweep directory, normalized ("" for
 * the sweep directory itself); is_dir: gp names the directory, else a file inside it. */
static void golden_rel(char *rel, size_t n, const char *gp, int is_dir)
{
    nmo__path_norm(rel, n, gp);
    if (!is_dir) {
        char *sl = strrchr(rel, '/');
        if (sl) *sl = '\0';
        else rel[0] = '\0';
    }
}

/* Two cases on one directory, or one inside another's: `golden --force` would replace one
 * with the other (the first case's data silently lost). */
static void golden_overlaps(nmo_sweep *s)
{
    size_t dl = strlen(s->dir);
    for (int i = 0; i < s->n_cases; i++)
        for (int j = 0; j < s->n_cases; j++) {
            nmo_sweep_case *a = &s->cases[i], *b = &s->cases[j];
            if (i == j || a->golden_null || b->golden_null || !a->golden_dir[0] || !b->golden_dir[0]) continue;
            char ra[NMO_BPATH], rb[NMO_BPATH];
            nmo__path_norm(ra, sizeof ra, strncmp(a->golden_dir, s->dir, dl) == 0 ? a->golden_dir + dl : a->golden_dir);
            nmo__path_norm(rb, sizeof rb, strncmp(b->golden_dir, s->dir, dl) == 0 ? b->golden_dir + dl : b->golden_dir);
            size_t la = strlen(ra);
            int same = strcmp(ra, rb) == 0, inside = !same && strncmp(ra, rb, la) == 0 && rb[la] == '/';
            if ((same && i < j) || inside) {
                char m[sizeof b->error];
                snprintf(m, sizeof m, "%s: case '%s': golden directory %s %s that of case '%s'", s->path, b->id, rb,
                         same ? "is also" : "lies inside", a->id);
                if (!b->error[0]) snprintf(b->error, sizeof b->error, "%s", m);
                if (b->graph) {
                    cJSON_Delete(b->graph);
                    b->graph = NULL;
                }
            }
        }
}

/* The sweep's documents: sweep.json (version, cases) and graph.template.json (a graph
 * whose uids and wiring are literal); the template's uids into tuid. */
static nmo_status sweep_open(nmo_sweep *s, const char *dir, int64_t *tuid, int *ntu, nmo_err *err)
{
    char tpath[NMO_BPATH + 32];
    nmo__join(tpath, sizeof tpath, dir, "graph.template.json");
    if (!nmo__exists(s->path))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: graph.template.json without sweep.json (a template sweep needs both)", tpath);
    if (!nmo__exists(tpath))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: no graph.template.json next to it (a template sweep needs both)", s->path);
    if (!(s->tmpl = nmo__read_json(tpath, err))) return NMO_ERR_PARSE;
    if (!(s->doc = nmo__read_json(s->path, err))) return NMO_ERR_PARSE;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(s->doc, "version");
    int64_t v;
    const cJSON *tts = cJSON_GetObjectItemCaseSensitive(s->tmpl, "tensors");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(s->doc, "cases");
    char key[96];
    if (!cJSON_IsObject(s->doc)) return nmo_err_set(err, NMO_ERR_DATA, "%s: not a JSON object", s->path);
    if (!ver)
        return nmo_err_set(err, NMO_ERR_DATA, "%s: missing version (this reader supports %d)", s->path, NMO_SWEEP_VERSION);
    if (!nmo__json_int(ver, INT32_MIN, INT32_MAX, &v) || v != NMO_SWEEP_VERSION)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s: version %g is not supported (this reader supports %d)", s->path,
                           cJSON_IsNumber(ver) ? ver->valuedouble : -1.0, NMO_SWEEP_VERSION);
    if (!cJSON_IsArray(cases)) return nmo_err_set(err, NMO_ERR_DATA, "%s: no \"cases\" array", s->path);
    if (!cJSON_IsObject(s->tmpl) || !cJSON_IsArray(tts) || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s->tmpl, "nodes")))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: not a graph template (needs \"tensors\" and \"nodes\" arrays)", tpath);
    if (wiring_placeholder(s->tmpl, key, sizeof key))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: placeholder in '%s' (tensor uids and wiring are fixed by the topology)", tpath, key);
    *ntu = 0;
    for (const cJSON *t = tts->child; t; t = t->next) {
        int64_t u;
        if (!nmo__json_int(cJSON_GetObjectItemCaseSensitive(t, "uid"), 0, INT64_MAX / 2, &u) || *ntu >= NMO_GRAPH_MAX_TENSORS)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: tensors[%d]: uid must be a literal non-negative integer", tpath, *ntu);
        tuid[(*ntu)++] = u;
    }
    return NMO_OK;
}

/* A case's golden entry: null, or a path that stays strictly inside the sweep directory. */
static void case_golden(nmo_sweep_case *sc, const cJSON *gd, const char *dir, const char *path, const char *id)
{
    if (!gd || cJSON_IsNull(gd)) {
        sc->golden_null = 1;
        return;
    }
    const char *gp = cJSON_IsObject(gd) ? jstr(gd, "path") : NULL;
    const char *gid = cJSON_IsObject(gd) ? jstr(gd, "id") : NULL;
    if (!gp || !*gp) {
        case_err(sc, "%s: case '%s': golden has no path (a non-null golden needs golden.path)%s", path, id, "");
        return;
    }
    if (gid && strcmp(gid, id) != 0) {
        case_err(sc, "%s: case '%s': golden.id '%s' differs from the case id", path, id, gid);
        return;
    }
    int escapes = gp[0] == '/';
    for (const char *p = gp; *p && !escapes;) {
        size_t l = strcspn(p, "/");
        if (l == 2 && p[0] == '.' && p[1] == '.') escapes = 1;
        p += l;
        if (*p) p++;
    }
    char full[NMO_BPATH * 2];
    nmo__join(full, sizeof full, dir, gp);
    if (!escapes && nmo__exists(full) && !nmo__inside(dir, full)) escapes = 1;
    /* every existing component, dangling symlinks included: golden would
     * create the missing target wherever the link points */
    if (!escapes && nmo__path_escapes(dir, gp)) escapes = 1;
    if (escapes) {
        case_err(sc, "%s: case '%s': golden.path '%s' escapes the bundle", path, id, gp);
        return;
    }
    /* a directory, or a file inside one (tensors.dvc): the case directory; before
     * generation the path may not exist yet, so a last component with a dot names a file */
    const char *lastc = strrchr(full, '/');
    lastc = lastc ? lastc + 1 : full;
    int gp_dir = nmo__is_dir(full) || (!nmo__exists(full) && !strchr(lastc, '.'));
    if (!gp_dir) {
        char *sl = strrchr(full, '/');
        if (sl) *sl = '\0';
    }
    snprintf(sc->golden_dir, sizeof sc->golden_dir, "%s", full);
    /* the case directory must lie strictly below the sweep directory: `golden --force`
     * replaces it whole */
    char rel[NMO_BPATH];
    golden_rel(rel, sizeof rel, gp, gp_dir);
    if (!rel[0])
        case_err(sc, "%s: case '%s': golden.path '%s' names the sweep directory itself (each case needs its own directory)",
                 path, id, gp);
}

/* values.tensors: each uid once, every one in the template, none of the template's left out. */
static void case_tensor_set(nmo_sweep_case *sc, const cJSON *vt, const int64_t *tuid, int ntu, const char *path,
                            const char *id)
{
    int64_t seen[NMO_GRAPH_MAX_TENSORS];
    int ns = 0;
    for (const cJSON *t = vt->child; t; t = t->next) {
        int64_t u;
        char us[32];
        if (!nmo__json_int(cJSON_GetObjectItemCaseSensitive(t, "uid"), 0, INT64_MAX / 2, &u)) {
            case_err(sc, "%s: case '%s': a values.tensors entry has no uid%s", path, id, "");
            break;
        }
        snprintf(us, sizeof us, "%lld", (long long)u);
        for (int q = 0; q < ns; q++)
            if (seen[q] == u) case_err(sc, "%s: case '%s': duplicate tensor uid %s in values.tensors", path, id, us);
        int in_t = 0;
        for (int q = 0; q < ntu; q++) in_t |= tuid[q] == u;
        if (!in_t) case_err(sc, "%s: case '%s': tensor uid %s is not in graph.template.json", path, id, us);
        if (ns < NMO_GRAPH_MAX_TENSORS) seen[ns++] = u;
    }
    for (int q = 0; q < ntu; q++) {
        int found = 0;
        for (int r = 0; r < ns; r++) found |= seen[r] == tuid[q];
        char us[32];
        snprintf(us, sizeof us, "%lld", (long long)tuid[q]);
        if (!found)
            case_err(sc, "%s: case '%s': values.tensors omits template tensor uid %s (cases keep the template's tensor set)",
                     path, id, us);
    }
}

/* The template with the case's values substituted; NULL (and x->err set) on failure. */
static cJSON *case_expand(xctx *x, const cJSON *tmpl)
{
    cJSON *g = cJSON_Duplicate(tmpl, 1);
    int ok = g != NULL;
    for (cJSON *k = g ? g->child : NULL; k && ok; k = k->next) {
        if (k->string && strcmp(k->string, "tensors") == 0 && cJSON_IsArray(k)) {
            for (cJSON *t = k->child; t && ok; t = t->next) {
                int64_t u = -1;
                nmo__json_int(cJSON_GetObjectItemCaseSensitive(t, "uid"), 0, INT64_MAX / 2, &u);
                ok = expand(x, t, u);
            }
        } else if (cJSON_IsString(k) && strstr(k->valuestring, "${case.")) {
            cJSON *r = subst_string(x, k->valuestring, -1);
            if (!r) ok = 0;
            else {
                replace_keep_key(g, k, r);
                k = r;
            }
        } else if (cJSON_IsObject(k) || cJSON_IsArray(k)) {
            ok = expand(x, k, -1);
        }
    }
    if (!ok) {
        if (!x->err[0]) snprintf(x->err, x->errn, "%s: case '%s': expansion failed", x->path, x->id);
        cJSON_Delete(g);
        return NULL;
    }
    return g;
}

/* Unused values are warnings (authors may keep descriptive fields). */
static void warn_unused(const xctx *x, const cJSON *vals, nmo_diag_fn diag, void *ctx)
{
    int i = 0;
    for (const cJSON *e = vals->child; e; e = e->next, i++) {
        if (!e->string || strcmp(e->string, "tensors") == 0) continue;
        if (strcmp(e->string, "attributes") == 0) {
            int a = 0;
            for (const cJSON *ae = e->child; ae; ae = ae->next, a++)
                if (a < 64 && !x->used_attr[a]) {
                    char m[NMO_BPATH + 256];
                    snprintf(m, sizeof m, "%s: case '%s': values.attributes.%s is not used by the template", x->path,
                             x->id, ae->string ? ae->string : "?");
                    diag(ctx, NMO_DIAG_WARN, m);
                }
            continue;
        }
        if (i < 64 && !x->used_top[i] && strcmp(e->string, "layout") != 0 && strcmp(e->string, "features") != 0) {
            char m[NMO_BPATH + 256];
            snprintf(m, sizeof m, "%s: case '%s': values.%s is not used by the template", x->path, x->id, e->string);
            diag(ctx, NMO_DIAG_WARN, m);
        }
    }
}

/* Per-case signatures for the id checks: dtypes, layout, features. */
typedef struct {
    char (*d)[64];
    char (*l)[32];
    char (*f)[128];
} sigs;

static void case_sigs(sigs *sg, int ci, const cJSON *g, const nmo_graph *gr, const cJSON *vals)
{
    char tk[4][32];
    int nt;
    dtype_sig(g, sg->d[ci], sizeof sg->d[ci], tk, &nt);
    const char *lay = vals ? jstr(vals, "layout") : NULL;
    snprintf(sg->l[ci], sizeof sg->l[ci], "%s", lay ? lay : nmo_graph_layout(gr));
    sg->f[ci][0] = '\0';
    const cJSON *fe = vals ? cJSON_GetObjectItemCaseSensitive(vals, "features") : NULL;
    for (const cJSON *f = cJSON_IsArray(fe) ? fe->child : NULL; f; f = f->next)
        if (cJSON_IsString(f)) {
            size_t l = strlen(sg->f[ci]);
            snprintf(sg->f[ci] + l, sizeof sg->f[ci] - l, "%s%s", l ? " " : "", f->valuestring);
        }
}

/* One case: id, metadata, golden, values, expansion and the expanded graph's parse. */
static void load_case(nmo_sweep *s, int ci, const cJSON *c, const char *dir, const int64_t *tuid, int ntu, sigs *sg,
                      nmo_diag_fn diag, void *ctx)
{
    nmo_sweep_case *sc = &s->cases[ci];
    char idx[32];
    snprintf(idx, sizeof idx, "cases[%d]", ci);
    const char *id = cJSON_IsObject(c) ? jstr(c, "id") : NULL;
    if (!id) {
        snprintf(sc->id, sizeof sc->id, "case_%d", ci);
        case_err(sc, "%s: %s: missing id%s", s->path, idx, "");
        return;
    }
    snprintf(sc->id, sizeof sc->id, "%s", id);
    if (!snake_case(id)) case_err(sc, "%s: case '%s': id is not lowercase_snake_case%s", s->path, id, "");
    for (int q = 0; q < ci; q++)
        if (strcmp(s->cases[q].id, id) == 0) {
            char m[NMO_BPATH + 256];
            snprintf(m, sizeof m, "%s: duplicate case id '%s' (cases[%d] and cases[%d])", s->path, id, q, ci);
            snprintf(sc->error, sizeof sc->error, "%s", m);
            if (!s->cases[q].error[0]) snprintf(s->cases[q].error, sizeof s->cases[q].error, "%s", m);
        }
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(c, "metadata");
    sc->metadata = cJSON_IsObject(md) ? md : NULL;
    if (sc->metadata) {
        const cJSON *fv = cJSON_GetObjectItemCaseSensitive(md, "format_version");
        int64_t f;
        if (fv && (!nmo__json_int(fv, INT32_MIN, INT32_MAX, &f) || f != NMO_BUNDLE_FORMAT_VERSION))
            case_err(sc, "%s: case '%s': metadata.format_version is not supported (this reader supports 1)%s", s->path, id, "");
    }
    case_golden(sc, cJSON_GetObjectItemCaseSensitive(c, "golden"), dir, s->path, id);
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(c, "values");
    if (vals && !cJSON_IsObject(vals)) {
        case_err(sc, "%s: case '%s': values is not an object%s", s->path, id, "");
        return;
    }
    const cJSON *vt = vals ? cJSON_GetObjectItemCaseSensitive(vals, "tensors") : NULL;
    if (vt && !cJSON_IsArray(vt)) case_err(sc, "%s: case '%s': values.tensors is not an array%s", s->path, id, "");
    if (cJSON_IsArray(vt)) case_tensor_set(sc, vt, tuid, ntu, s->path, id);
    if (sc->error[0]) return;
    xctx x;
    memset(&x, 0, sizeof x);
    x.path = s->path;
    x.id = id;
    x.values = vals;
    x.attrs = vals ? cJSON_GetObjectItemCaseSensitive(vals, "attributes") : NULL;
    x.tensors = cJSON_IsArray(vt) ? vt : NULL;
    x.err = sc->error;
    x.errn = sizeof sc->error;
    cJSON *g = case_expand(&x, s->tmpl);
    if (!g) return;
    if (diag && vals) warn_unused(&x, vals, diag, ctx);
    /* the expanded case must be a valid single-graph bundle graph */
    char src[NMO_BPATH + 200];
    snprintf(src, sizeof src, "%s (case %s)", s->path, id);
    nmo_graph gr;
    nmo_err ge;
    const char *hint = sc->metadata ? jstr(sc->metadata, "operation") : NULL;
    if (nmo__graph_parse(&gr, g, src, hint, &ge) != NMO_OK) {
        snprintf(sc->error, sizeof sc->error, "%s", ge.msg);
        cJSON_Delete(g);
        return;
    }
    sc->graph = g;
    case_sigs(sg, ci, g, &gr, vals);
}

/* Discriminator tokens: a field that varies across the sweep must be in every id. */
static void check_discriminators(nmo_sweep *s, const sigs *sg)
{
    int vary_d = 0, vary_l = 0, vary_f = 0, first = -1;
    for (int i = 0; i < s->n_cases; i++) {
        if (!s->cases[i].graph) continue;
        if (first < 0) {
            first = i;
            continue;
        }
        vary_d |= strcmp(sg->d[i], sg->d[first]) != 0;
        vary_l |= strcmp(sg->l[i], sg->l[first]) != 0;
        vary_f |= strcmp(sg->f[i], sg->f[first]) != 0;
    }
    for (int i = 0; i < s->n_cases; i++) {
        nmo_sweep_case *sc = &s->cases[i];
        if (!sc->graph) continue;
        if (vary_d) {
            char tmp[64];
            snprintf(tmp, sizeof tmp, "%s", sg->d[i]);
            for (char *t = strtok(tmp, "+"); t; t = strtok(NULL, "+"))
                if (!has_dtype_token(sc->id, t)) {
                    case_err(sc, "%s: case '%s': id lacks the dtype token '%s' (data types vary across the sweep)", s->path, sc->id, t);
                    break;
                }
        }
        if (vary_l && !has_token(sc->id, sg->l[i]))
            case_err(sc, "%s: case '%s': id lacks the layout token '%s' (layouts vary across the sweep)", s->path, sc->id, sg->l[i]);
        if (vary_f && sg->f[i][0]) {
            char tmp[128];
            snprintf(tmp, sizeof tmp, "%s", sg->f[i]);
            for (char *t = strtok(tmp, " "); t; t = strtok(NULL, " "))
                if (!has_token(sc->id, t)) {
                    case_err(sc, "%s: case '%s': id lacks the feature token '%s' (features vary across the sweep)", s->path, sc->id, t);
                    break;
                }
        }
        if (sc->error[0]) {
            cJSON_Delete(sc->graph);
            sc->graph = NULL;
        }
    }
}

nmo_status nmo_sweep_load(nmo_sweep *s, const char *dir, nmo_diag_fn diag, void *ctx, nmo_err *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    nmo__join(s->path, sizeof s->path, dir, "sweep.json");
    base_name(s->topology, sizeof s->topology, dir);
    parent_name(s->operation, sizeof s->operation, dir);
    int64_t tuid[NMO_GRAPH_MAX_TENSORS];
    int ntu = 0;
    nmo_status st = sweep_open(s, dir, tuid, &ntu, err);
    if (st != NMO_OK) {
        nmo_sweep_free(s);
        return st;
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(s->doc, "cases");
    s->n_cases = cJSON_GetArraySize(cases);
    s->cases = calloc((size_t)(s->n_cases ? s->n_cases : 1), sizeof *s->cases);
    if (!s->cases) {
        nmo_sweep_free(s);
        return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    }
    if (s->n_cases == 0 && diag) {
        char m[NMO_BPATH + 64];
        snprintf(m, sizeof m, "%s: no cases", s->path);
        diag(ctx, NMO_DIAG_WARN, m);
    }
    /* per-case signatures for the id checks: every case, not a fixed 256 */
    size_t nsig = (size_t)(s->n_cases ? s->n_cases : 1);
    sigs sg = {calloc(nsig, sizeof *sg.d), calloc(nsig, sizeof *sg.l), calloc(nsig, sizeof *sg.f)};
    if (!sg.d || !sg.l || !sg.f) {
        free(sg.d), free(sg.l), free(sg.f);
        nmo_sweep_free(s);
        return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    }
    int ci = 0;
    for (const cJSON *c = cases->child; c; c = c->next, ci++) load_case(s, ci, c, dir, tuid, ntu, &sg, diag, ctx);
    check_discriminators(s, &sg);
    free(sg.d), free(sg.l), free(sg.f);
    golden_overlaps(s);
    return NMO_OK;
}

void nmo_sweep_free(nmo_sweep *s)
{
    for (int i = 0; s->cases && i < s->n_cases; i++) cJSON_Delete(s->cases[i].graph);
    free(s->cases);
    cJSON_Delete(s->tmpl);
    cJSON_Delete(s->doc);
    memset(s, 0, sizeof *s);
}

nmo_status nmo_sweep_case_load(nmo_bundle *b, const nmo_sweep *s, int i, unsigned flags, nmo_err *err)
{
    memset(b, 0, sizeof *b);
    const nmo_sweep_case *sc = &s->cases[i];
    if (sc->error[0]) return nmo_err_set(err, NMO_ERR_DATA, "%s", sc->error);
    char src[NMO_BPATH + 200], meta[NMO_BPATH + 300], leaf[300];
    snprintf(src, sizeof src, "%s (case %s)", s->path, sc->id);
    const char *gdir = sc->golden_null ? s->dir : sc->golden_dir;
    snprintf(leaf, sizeof leaf, "%s.meta.json", sc->id);
    nmo__join(meta, sizeof meta, gdir, leaf);
    unsigned f = flags;
    if (sc->golden_null) f |= NMO_BL_GRAPH_ONLY;
    else if (!(flags & NMO_BL_GRAPH_ONLY) && !nmo__is_dir(sc->golden_dir))
        return nmo_err_set(err, NMO_ERR_IO, "%s: case '%s': golden data directory %s is missing", s->path, sc->id,
                           sc->golden_dir);
    nmo_status st = nmo__bundle_load_core(b, sc->graph, src, gdir, sc->id, sc->golden_null ? "" : meta, s->dir,
                                          sc->metadata, f, err);
    if (st != NMO_OK) return st;
    b->kind = NMO_BK_SWEEP;
    if (!sc->golden_null && !(flags & NMO_BL_GRAPH_ONLY) && !b->have_golden) {
        char p[NMO_BPATH + 400];
        snprintf(leaf, sizeof leaf, "%s.tensor%lld.bin", sc->id, (long long)b->g.t[b->g.in_t[0]].uid);
        nmo__join(p, sizeof p, gdir, leaf);
        nmo_bundle_free(b);
        return nmo_err_set(err, NMO_ERR_IO, "%s: missing tensor file (case '%s' has a non-null golden)", p, sc->id);
    }
    return NMO_OK;
}
