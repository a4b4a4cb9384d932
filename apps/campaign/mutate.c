/* numoracle campaign: the mutation engine (see mutate.h).
 *
 * Tokenizer: identifiers, pp-numbers, strings, chars, punctuators (longest match),
 * whole preprocessor directives as one token; comments dropped. Function bodies: a `{`
 * at file scope right after the `)` of a parameter list. Typedef names are collected so
 * that `T *p` declarations are not mistaken for products.
 *
 * Operand extents (for term deletion) are found by scanning at bracket depth 0 until a
 * token that binds looser than + and - (assignment, relational, logical, bitwise, comma,
 * ?:, an unmatched bracket). Binary vs unary + - *: the previous token ends an operand
 * (identifier, number, ')' not closing a cast, ']').
 *
 * Statements holding a "skip" identifier of the profile (error returns, malloc, free)
 * are never mutated: mutating them only produces error exits or leaks. */
#include "campaign/mutate.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/status.h"
#include "nmo_internal.h"

/* ---------------------------------------------------------------- profiles */

static const nmo_mut_profile prof_c = {
    .name = "c",
    .round_bf16 = "nmo_cu_round_bf16",
    .round_fp16 = "nmo_cu_round_fp16",
    .nswap = 3,
    .swap_from = {"nmo_cu_f_to_bf16_rne", "nmo_cu_f_to_fp16_rne", "NMO_CU_ST_RNE"},
    .swap_to = {"nmo_cu_f_to_bf16_rz", "nmo_cu_f_to_fp16_rz", "NMO_CU_ST_RZ"},
    .ncall = 1,
    .call_from = {"nmo_cu_plan_store"},
    .call_to = {"NMO_CU_ST_RZ"},
    .knob_suffix = "_cfg",
    .nskip = 8,
    .skip = {"nmo_err_set", "NMO_RETURN_IF_ERR", "malloc", "calloc", "realloc", "free",
             "nmo_cu_check_args", "nmo_cu_check_tensor"},
};

/* HIP kernels (hip/): CUDA/HIP rounding intrinsics; the accumulator-narrowing helpers
 * are the portability header's bf16/half round trips. */
static const nmo_mut_profile prof_hip = {
    .name = "hip",
    .round_bf16 = "nmo_round_bf16",
    .round_fp16 = "nmo_round_fp16",
    .nswap = 12,
    .swap_from = {"__float2bfloat16_rn", "__float2half_rn", "__fadd_rn", "__fsub_rn",
                  "__fmul_rn", "__fdiv_rn", "__fmaf_rn", "__frcp_rn", "__fsqrt_rn", "rintf",
                  "nearbyintf", "__float2bfloat16"},
    .swap_to = {"__float2bfloat16_rz", "__float2half_rz", "__fadd_rz", "__fsub_rz",
                "__fmul_rz", "__fdiv_rz", "__fmaf_rz", "__frcp_rz", "__fsqrt_rz", "truncf",
                "truncf", "__float2bfloat16_rz"},
    .ncall = 0,
    .nskip = 6,
    .skip = {"hipMalloc", "hipFree", "malloc", "free", "NMO_HIP_CHECK", "nmo_err_set"},
};

const nmo_mut_profile *nmo_mut_profile_get(const char *name)
{
    if (!name || strcmp(name, "c") == 0) return &prof_c;
    if (strcmp(name, "hip") == 0) return &prof_hip;
    return NULL;
}

static const char *const mop_names[NMO_MOP_COUNT] = {
    "aor", "ror", "lb", "cp", "rwc", "acc", "rnd", "sdl", "term", "idx", "bcast",
};

const char *nmo_mop_name(nmo_mop m) { return (unsigned)m < NMO_MOP_COUNT ? mop_names[m] : "?"; }

int nmo_mop_from_name(const char *name)
{
    for (int i = 0; i < NMO_MOP_COUNT; i++)
        if (name && strcmp(name, mop_names[i]) == 0) return i;
    return -1;
}

uint64_t nmo_fnv1a(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* ---------------------------------------------------------------- tokenizer */

static const char *const puncts3[] = {"<<=", ">>=", "...", NULL};
static const char *const puncts2[] = {"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
                                      "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                      "^=", "##", NULL};

static int push_tok(nmo_src *s, int *cap, nmo_tk_kind k, int off, int len, int line, int col)
{
    if (s->ntok == *cap) {
        int nc = *cap ? *cap * 2 : 1024;
        nmo_tok *t = realloc(s->tok, (size_t)nc * sizeof *t);
        if (!t) return -1;
        s->tok = t;
        *cap = nc;
    }
    nmo_tok *t = &s->tok[s->ntok++];
    t->kind = k;
    t->off = off;
    t->len = len;
    t->line = line;
    t->col = col;
    t->func = -1;
    t->match = -1;
    return 0;
}

static int tk_eq(const nmo_src *s, int i, const char *str)
{
    if (i < 0 || i >= s->ntok) return 0;
    size_t n = strlen(str);
    return (size_t)s->tok[i].len == n && memcmp(s->text + s->tok[i].off, str, n) == 0;
}

static int tk_is_punct(const nmo_src *s, int i, const char *str)
{
    return i >= 0 && i < s->ntok && s->tok[i].kind == NMO_TK_PUNCT && tk_eq(s, i, str);
}

static void tk_text(char *buf, size_t n, const nmo_src *s, int i)
{
    size_t l = (size_t)s->tok[i].len < n - 1 ? (size_t)s->tok[i].len : n - 1;
    memcpy(buf, s->text + s->tok[i].off, l);
    buf[l] = '\0';
}

static void add_type(nmo_src *s, const char *name)
{
    for (int i = 0; i < s->ntypes; i++)
        if (strcmp(s->types[i], name) == 0) return;
    char (*t)[64] = realloc(s->types, (size_t)(s->ntypes + 1) * sizeof *t);
    if (!t) return;
    s->types = t;
    snprintf(s->types[s->ntypes++], 64, "%s", name);
}

void nmo_src_add_types(nmo_src *s, const nmo_src *from)
{
    for (int i = 0; i < from->ntypes; i++) add_type(s, from->types[i]);
}

static nmo_status tokenize(nmo_src *s, nmo_err *err)
{
    const char *t = s->text;
    size_t n = s->len, i = 0, line_start = 0;
    int line = 1, at_bol = 1, cap = 0;
    while (i < n) {
        char c = t[i];
        if (c == '\n') {
            i++;
            line++;
            line_start = i;
            at_bol = 1;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        if (c == '/' && i + 1 < n && t[i + 1] == '/') {
            while (i < n && t[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < n && t[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(t[i] == '*' && t[i + 1] == '/')) {
                if (t[i] == '\n') line++, line_start = i + 1;
                i++;
            }
            i = i + 2 <= n ? i + 2 : n;
            continue;
        }
        int col = (int)(i - line_start) + 1, l0 = line;
        size_t b = i;
        nmo_tk_kind k;
        if (c == '#' && at_bol) {
            /* a directive: to the end of the line, following backslash continuations */
            while (i < n && t[i] != '\n') {
                if (t[i] == '\\' && i + 1 < n && t[i + 1] == '\n') {
                    i += 2;
                    line++;
                    line_start = i;
                    continue;
                }
                if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') { /* comment inside */
                    i += 2;
                    while (i + 1 < n && !(t[i] == '*' && t[i + 1] == '/')) {
                        if (t[i] == '\n') line++, line_start = i + 1;
                        i++;
                    }
                    i = i + 2 <= n ? i + 2 : n;
                    continue;
                }
                i++;
            }
            k = NMO_TK_PP;
        } else if (isalpha((unsigned char)c) || c == '_') {
            while (i < n && (isalnum((unsigned char)t[i]) || t[i] == '_')) i++;
            k = NMO_TK_IDENT;
        } else if (isdigit((unsigned char)c) || (c == '.' && i + 1 < n && isdigit((unsigned char)t[i + 1]))) {
            i++;
            while (i < n) {
                char d = t[i];
                if (isalnum((unsigned char)d) || d == '_' || d == '.') i++;
                else if ((d == '+' || d == '-') && strchr("eEpP", t[i - 1]))
                    i++;
                else break;
            }
            k = NMO_TK_NUMBER;
        } else if (c == '"' || c == '\'') {
            char q = c;
            i++;
            while (i < n && t[i] != q && t[i] != '\n') {
                if (t[i] == '\\' && i + 1 < n) i++;
                i++;
            }
            if (i < n && t[i] == q) i++;
            k = q == '"' ? NMO_TK_STRING : NMO_TK_CHAR;
        } else {
            size_t l = 1;
            for (int p = 0; puncts3[p]; p++)
                if (i + 3 <= n && memcmp(t + i, puncts3[p], 3) == 0) l = 3;
            if (l == 1)
                for (int p = 0; puncts2[p]; p++)
                    if (i + 2 <= n && memcmp(t + i, puncts2[p], 2) == 0) l = 2;
            i += l;
            k = NMO_TK_PUNCT;
        }
        at_bol = 0;
        if (push_tok(s, &cap, k, (int)b, (int)(i - b), l0, col) != 0)
            return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory tokenizing", s->path);
    }
    return NMO_OK;
}

static int is_keyword(const nmo_src *s, int i)
{
    static const char *const kw[] = {"if", "else", "for", "while", "do", "switch", "case",
                                      "default", "return", "break", "continue", "goto",
                                      "sizeof", "typedef", "struct", "union", "enum", "static",
                                      "const", "volatile", "inline", "extern", "register",
                                      "restrict", "_Alignof", "_Static_assert", NULL};
    if (s->tok[i].kind != NMO_TK_IDENT) return 0;
    for (int k = 0; kw[k]; k++)
        if (tk_eq(s, i, kw[k])) return 1;
    return 0;
}

static int is_type_name(const nmo_src *s, int i)
{
    static const char *const bt[] = {"void", "char", "short", "int", "long", "float", "double",
                                     "signed", "unsigned", "_Bool", "bool", "const", "volatile",
                                     "struct", "union", "enum", "half", "__half",
                                     "__nv_bfloat16", "hip_bfloat16", "__hip_bfloat16",
                                     "float2", "float4", "dim3", "_Float16", NULL};
    if (i < 0 || i >= s->ntok || s->tok[i].kind != NMO_TK_IDENT) return 0;
    for (int k = 0; bt[k]; k++)
        if (tk_eq(s, i, bt[k])) return 1;
    char name[64];
    tk_text(name, sizeof name, s, i);
    size_t l = strlen(name);
    if (l > 2 && strcmp(name + l - 2, "_t") == 0) return 1;
    for (int k = 0; k < s->ntypes; k++)
        if (strcmp(s->types[k], name) == 0) return 1;
    return 0;
}

/* Bracket matching, typedef names, function bodies. */
static nmo_status structure(nmo_src *s, nmo_err *err)
{
    int *stack = malloc((size_t)(s->ntok + 1) * sizeof(int)), sp = 0;
    if (!stack) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->ntok; i++) {
        if (s->tok[i].kind != NMO_TK_PUNCT) continue;
        if (tk_eq(s, i, "(") || tk_eq(s, i, "[") || tk_eq(s, i, "{")) {
            stack[sp++] = i;
        } else if (tk_eq(s, i, ")") || tk_eq(s, i, "]") || tk_eq(s, i, "}")) {
            if (sp == 0) continue; /* unbalanced: leave unmatched */
            int o = stack[--sp];
            s->tok[o].match = i;
            s->tok[i].match = o;
        }
    }
    free(stack);

    /* file scope walk */
    int cap = 0;
    for (int i = 0; i < s->ntok; i++) {
        if (s->tok[i].kind == NMO_TK_IDENT && tk_eq(s, i, "typedef")) {
            int j = i + 1, last = -1;
            while (j < s->ntok && !tk_is_punct(s, j, ";")) {
                if (tk_is_punct(s, j, "{") && s->tok[j].match > j) j = s->tok[j].match;
                else if (tk_is_punct(s, j, "(") && s->tok[j].match > j) {
                    /* function-pointer typedef: the name is inside (*name) */
                    for (int k = j + 1; k < s->tok[j].match; k++)
                        if (s->tok[k].kind == NMO_TK_IDENT) last = k;
                    j = s->tok[j].match;
                } else if (s->tok[j].kind == NMO_TK_IDENT)
                    last = j;
                j++;
            }
            if (last >= 0) {
                char name[64];
                tk_text(name, sizeof name, s, last);
                add_type(s, name);
            }
            i = j;
            continue;
        }
        if (tk_is_punct(s, i, "{")) {
            int close = s->tok[i].match;
            if (close < 0) break;
            int p = i - 1;
            while (p >= 0 && s->tok[p].kind == NMO_TK_PP) p--;
            if (p >= 0 && tk_is_punct(s, p, ")") && s->tok[p].match > 0 &&
                s->tok[s->tok[p].match - 1].kind == NMO_TK_IDENT &&
                !is_keyword(s, s->tok[p].match - 1)) {
                if (s->nfn == cap) {
                    cap = cap ? 2 * cap : 16;
                    nmo_func *f = realloc(s->fn, (size_t)cap * sizeof *f);
                    if (!f) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
                    s->fn = f;
                }
                nmo_func *f = &s->fn[s->nfn];
                tk_text(f->name, sizeof f->name, s, s->tok[p].match - 1);
                f->body_open = i;
                f->body_close = close;
                f->line_begin = s->tok[s->tok[p].match - 1].line;
                f->line_end = s->tok[close].line;
                for (int k = i; k <= close; k++) s->tok[k].func = s->nfn;
                s->nfn++;
            }
            i = close;
        }
    }
    return NMO_OK;
}

nmo_status nmo_src_parse(nmo_src *s, const char *path, const char *text, size_t len, nmo_err *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path ? path : "<text>");
    s->text = malloc(len + 1);
    if (!s->text) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    memcpy(s->text, text, len);
    s->text[len] = '\0';
    s->len = len;
    nmo_status st = tokenize(s, err);
    if (st == NMO_OK) st = structure(s, err);
    if (st != NMO_OK) nmo_src_free(s);
    return st;
}

nmo_status nmo_src_load(nmo_src *s, const char *path, nmo_err *err)
{
    memset(s, 0, sizeof *s);
    FILE *f = nmo__fopen_regular(path, err);
    if (!f) return NMO_ERR_IO;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
            }
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return nmo_err_set(err, NMO_ERR_IO, "%s: read error", path);
    }
    nmo_status st = nmo_src_parse(s, path, buf ? buf : "", n, err);
    free(buf);
    return st;
}

void nmo_src_free(nmo_src *s)
{
    free(s->text);
    free(s->tok);
    free(s->fn);
    free(s->types);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- analysis helpers */

/* A ')' that closes a cast: the group holds only type words and '*'. */
static int is_cast_close(const nmo_src *s, int close)
{
    int open = s->tok[close].match;
    if (open < 0 || open >= close - 0) return 0;
    int types = 0;
    for (int k = open + 1; k < close; k++) {
        if (tk_is_punct(s, k, "*")) continue;
        if (!is_type_name(s, k)) return 0;
        types++;
    }
    return types > 0;
}

/* Token i ends an operand (so a following + - * is binary). */
static int ends_operand(const nmo_src *s, int i)
{
    if (i < 0) return 0;
    const nmo_tok *t = &s->tok[i];
    switch (t->kind) {
    case NMO_TK_NUMBER:
    case NMO_TK_STRING:
    case NMO_TK_CHAR: return 1;
    case NMO_TK_IDENT: return !is_keyword(s, i);
    case NMO_TK_PUNCT:
        if (tk_eq(s, i, "]")) return 1;
        if (tk_eq(s, i, ")")) return !is_cast_close(s, i);
        return 0;
    default: return 0;
    }
}

static int prev_sig(const nmo_src *s, int i)
{
    for (i--; i >= 0; i--)
        if (s->tok[i].kind != NMO_TK_PP) return i;
    return -1;
}

/* Binary + - at i. */
static int is_binary_addsub(const nmo_src *s, int i)
{
    return (tk_is_punct(s, i, "+") || tk_is_punct(s, i, "-")) && ends_operand(s, prev_sig(s, i));
}

/* Binary * at i (not a pointer declarator, cast or dereference). */
static int is_binary_mul(const nmo_src *s, int i)
{
    if (!tk_is_punct(s, i, "*")) return 0;
    int p = prev_sig(s, i);
    if (!ends_operand(s, p)) return 0;
    if (s->tok[p].kind == NMO_TK_IDENT) {
        if (is_type_name(s, p)) return 0;
        int pp = prev_sig(s, p);
        int starts = pp < 0 || tk_is_punct(s, pp, ";") || tk_is_punct(s, pp, "{") ||
                     tk_is_punct(s, pp, "}") || tk_is_punct(s, pp, ",") ||
                     tk_is_punct(s, pp, "(") || is_keyword(s, pp);
        if (starts && i + 2 < s->ntok && s->tok[i + 1].kind == NMO_TK_IDENT &&
            (tk_is_punct(s, i + 2, "=") || tk_is_punct(s, i + 2, ",") ||
             tk_is_punct(s, i + 2, ";") || tk_is_punct(s, i + 2, ")") ||
             tk_is_punct(s, i + 2, "[")))
            return 0; /* looks like `T *name =` */
    }
    return 1;
}

/* Tokens that end an additive operand (bind looser than + -). */
static int is_stopper(const nmo_src *s, int i)
{
    static const char *const st[] = {";", ",", "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                     "^=", "<<=", ">>=", "?", ":", "&&", "||", "|", "^", "==",
                                     "!=", "<", ">", "<=", ">=", "<<", ">>", "{", "}", NULL};
    const nmo_tok *t = &s->tok[i];
    if (t->kind == NMO_TK_PP) return 1;
    if (t->kind == NMO_TK_IDENT) return is_keyword(s, i) && !tk_eq(s, i, "sizeof");
    if (t->kind != NMO_TK_PUNCT) return 0;
    for (int k = 0; st[k]; k++)
        if (tk_eq(s, i, st[k])) return 1;
    if (tk_eq(s, i, "&")) return ends_operand(s, prev_sig(s, i)); /* binary and */
    return 0;
}

/* One past the last token of the additive-level operand starting at j. */
static int operand_end(const nmo_src *s, int j, int limit)
{
    int k = j, seen = 0;
    while (k < limit) {
        const nmo_tok *t = &s->tok[k];
        if (t->kind == NMO_TK_PUNCT && (tk_eq(s, k, "(") || tk_eq(s, k, "["))) {
            if (t->match < 0) return -1;
            k = t->match + 1;
            seen = 1;
            continue;
        }
        if (t->kind == NMO_TK_PUNCT && (tk_eq(s, k, ")") || tk_eq(s, k, "]"))) break;
        if (is_stopper(s, k)) break;
        if (seen && (tk_eq(s, k, "+") || tk_eq(s, k, "-")) && t->kind == NMO_TK_PUNCT &&
            ends_operand(s, k - 1))
            break;
        seen = 1;
        k++;
    }
    return k > j ? k : -1;
}

/* First token of the additive-level operand ending at i. */
static int operand_start(const nmo_src *s, int i, int limit)
{
    int k = i;
    while (k > limit) {
        const nmo_tok *t = &s->tok[k];
        if (t->kind == NMO_TK_PUNCT && (tk_eq(s, k, ")") || tk_eq(s, k, "]"))) {
            if (t->match < 0) return -1;
            k = t->match - 1;
            continue;
        }
        if (t->kind == NMO_TK_PUNCT && (tk_eq(s, k, "(") || tk_eq(s, k, "["))) break;
        if (is_stopper(s, k)) break;
        if ((tk_eq(s, k, "+") || tk_eq(s, k, "-")) && t->kind == NMO_TK_PUNCT &&
            ends_operand(s, prev_sig(s, k)))
            break;
        k--;
    }
    return k < i ? k + 1 : -1;
}

/* Statement segments of function bodies: split at ; { } outside parentheses. seg[i] is
 * the index of the segment holding token i (-1 outside bodies); skip[seg] marks
 * segments holding a profile skip identifier. */
typedef struct {
    int *seg;
    int nseg;
    int *seg_begin, *seg_end; /* token ranges, inclusive */
    unsigned char *skip;
    /* loops */
    int nloop;
    int *loop_var;            /* token of the loop variable, -1 if none */
    int *loop_begin, *loop_end;
    int *loop_cond_begin, *loop_cond_end; /* condition clause tokens [b, e) */
    /* float variables per function: token indices of declared names */
    unsigned char *is_float_decl; /* per token: this identifier is a float(-ish) name */
    unsigned char *knob;          /* per token: the field of a knob access c->field */
} nmo_ana;

static int stmt_end(const nmo_src *s, int i, int limit);

/* End (inclusive) of the statement beginning at token i. */
static int stmt_end(const nmo_src *s, int i, int limit)
{
    if (i >= limit) return limit;
    if (tk_is_punct(s, i, "{")) return s->tok[i].match >= 0 ? s->tok[i].match : limit;
    if (tk_eq(s, i, "for") || tk_eq(s, i, "while") || tk_eq(s, i, "switch")) {
        if (!tk_is_punct(s, i + 1, "(") || s->tok[i + 1].match < 0) return limit;
        return stmt_end(s, s->tok[i + 1].match + 1, limit);
    }
    if (tk_eq(s, i, "if")) {
        if (!tk_is_punct(s, i + 1, "(") || s->tok[i + 1].match < 0) return limit;
        int e = stmt_end(s, s->tok[i + 1].match + 1, limit);
        if (e + 1 < limit && tk_eq(s, e + 1, "else")) e = stmt_end(s, e + 2, limit);
        return e;
    }
    if (tk_eq(s, i, "do")) {
        int e = stmt_end(s, i + 1, limit); /* body */
        for (int k = e + 1; k < limit; k++)
            if (tk_is_punct(s, k, ";")) return k;
        return limit;
    }
    for (int k = i; k < limit; k++) {
        if ((tk_is_punct(s, k, "(") || tk_is_punct(s, k, "[") || tk_is_punct(s, k, "{")) &&
            s->tok[k].match > k) {
            k = s->tok[k].match;
            continue;
        }
        if (tk_is_punct(s, k, ";")) return k;
    }
    return limit;
}

static void ana_free(nmo_ana *a)
{
    free(a->seg);
    free(a->seg_begin);
    free(a->seg_end);
    free(a->skip);
    free(a->loop_var);
    free(a->loop_begin);
    free(a->loop_end);
    free(a->loop_cond_begin);
    free(a->loop_cond_end);
    free(a->is_float_decl);
    free(a->knob);
    memset(a, 0, sizeof *a);
}

static int analyze(nmo_ana *a, const nmo_src *s, const nmo_mut_profile *p)
{
    memset(a, 0, sizeof *a);
    int n = s->ntok;
    a->seg = malloc((size_t)(n + 1) * sizeof(int));
    a->seg_begin = malloc((size_t)(n + 1) * sizeof(int));
    a->seg_end = malloc((size_t)(n + 1) * sizeof(int));
    a->skip = calloc((size_t)n + 1, 1);
    a->loop_var = malloc((size_t)(n + 1) * sizeof(int));
    a->loop_begin = malloc((size_t)(n + 1) * sizeof(int));
    a->loop_end = malloc((size_t)(n + 1) * sizeof(int));
    a->loop_cond_begin = malloc((size_t)(n + 1) * sizeof(int));
    a->loop_cond_end = malloc((size_t)(n + 1) * sizeof(int));
    a->is_float_decl = calloc((size_t)n + 1, 1);
    a->knob = calloc((size_t)n + 1, 1);
    if (!a->knob ||!a->seg || !a->seg_begin || !a->seg_end || !a->skip || !a->loop_var || !a->loop_begin ||
        !a->loop_end || !a->loop_cond_begin || !a->loop_cond_end || !a->is_float_decl) {
        ana_free(a);
        return -1;
    }
    for (int i = 0; i < n; i++) a->seg[i] = -1;
    for (int f = 0; f < s->nfn; f++) {
        const nmo_func *fn = &s->fn[f];
        int depth = 0, begin = fn->body_open + 1;
        for (int i = fn->body_open + 1; i < fn->body_close; i++) {
            const nmo_tok *t = &s->tok[i];
            if (t->kind == NMO_TK_PUNCT && (tk_eq(s, i, "(") || tk_eq(s, i, "["))) depth++;
            else if (t->kind == NMO_TK_PUNCT && (tk_eq(s, i, ")") || tk_eq(s, i, "]"))) depth--;
            a->seg[i] = a->nseg;
            int split = depth == 0 && t->kind == NMO_TK_PUNCT &&
                        (tk_eq(s, i, ";") || tk_eq(s, i, "{") || tk_eq(s, i, "}"));
            if (split || i == fn->body_close - 1) {
                a->seg_begin[a->nseg] = begin;
                a->seg_end[a->nseg] = i;
                a->nseg++;
                begin = i + 1;
            }
        }
        /* parameters: `float name`, `float *name`, `float name[]` */
        int popen = -1;
        for (int k = fn->body_open - 1; k >= 0; k--)
            if (tk_is_punct(s, k, ")")) {
                popen = s->tok[k].match;
                break;
            }
        /* knob parameters: `const X_cfg *c` */
        if (popen >= 0 && p->knob_suffix)
            for (int k = popen + 1; k < fn->body_open; k++) {
                if (s->tok[k].kind != NMO_TK_IDENT || !tk_is_punct(s, k + 1, "*") || s->tok[k + 2].kind != NMO_TK_IDENT)
                    continue;
                size_t sl = strlen(p->knob_suffix);
                if ((size_t)s->tok[k].len < sl ||
                    memcmp(s->text + s->tok[k].off + s->tok[k].len - sl, p->knob_suffix, sl) != 0)
                    continue;
                int pn = k + 2;
                for (int q = fn->body_open + 1; q + 2 < fn->body_close; q++)
                    if (s->tok[q].kind == NMO_TK_IDENT && s->tok[q].len == s->tok[pn].len &&
                        memcmp(s->text + s->tok[q].off, s->text + s->tok[pn].off, (size_t)s->tok[pn].len) == 0 &&
                        tk_is_punct(s, q + 1, "->") && s->tok[q + 2].kind == NMO_TK_IDENT)
                        a->knob[q + 2] = 1;
            }
        if (popen >= 0)
            for (int k = popen + 1; k < fn->body_open; k++)
                if (tk_eq(s, k, "float") || tk_eq(s, k, "double")) {
                    int j = k + 1;
                    while (tk_is_punct(s, j, "*")) j++;
                    if (j < n && s->tok[j].kind == NMO_TK_IDENT) a->is_float_decl[j] = 1;
                }
    }
    /* skip marks */
    for (int g = 0; g < a->nseg; g++) {
        int sk = 0;
        for (int i = a->seg_begin[g]; i <= a->seg_end[g] && !sk; i++)
            if (s->tok[i].kind == NMO_TK_IDENT)
                for (int q = 0; q < p->nskip; q++)
                    if (tk_eq(s, i, p->skip[q])) sk = 1;
        a->skip[g] = (unsigned char)sk;
    }
    /* float declarations: statements starting with [const] float|double */
    for (int g = 0; g < a->nseg; g++) {
        int b = a->seg_begin[g];
        while (b <= a->seg_end[g] && (tk_eq(s, b, "const") || tk_eq(s, b, "static"))) b++;
        if (!(tk_eq(s, b, "float") || tk_eq(s, b, "double"))) continue;
        int depth = 0;
        for (int i = b + 1; i <= a->seg_end[g]; i++) {
            if (tk_is_punct(s, i, "(") || tk_is_punct(s, i, "[") || tk_is_punct(s, i, "{")) depth++;
            if (tk_is_punct(s, i, ")") || tk_is_punct(s, i, "]") || tk_is_punct(s, i, "}")) depth--;
            if (depth == 0 && s->tok[i].kind == NMO_TK_IDENT &&
                (tk_is_punct(s, i + 1, "=") || tk_is_punct(s, i + 1, ",") ||
                 tk_is_punct(s, i + 1, ";") || tk_is_punct(s, i + 1, "[")))
                a->is_float_decl[i] = 1;
        }
    }
    /* loops */
    for (int i = 0; i < n; i++) {
        if (s->tok[i].func < 0 || !tk_eq(s, i, "for") || !tk_is_punct(s, i + 1, "(")) continue;
        int close = s->tok[i + 1].match;
        if (close < 0) continue;
        int semi1 = -1, semi2 = -1;
        for (int k = i + 2; k < close; k++) {
            if ((tk_is_punct(s, k, "(") || tk_is_punct(s, k, "[")) && s->tok[k].match > k) {
                k = s->tok[k].match;
                continue;
            }
            if (tk_is_punct(s, k, ";")) {
                if (semi1 < 0) semi1 = k;
                else if (semi2 < 0) semi2 = k;
            }
        }
        if (semi1 < 0 || semi2 < 0) continue;
        int var = -1;
        for (int k = i + 2; k < semi1; k++)
            if (s->tok[k].kind == NMO_TK_IDENT && tk_is_punct(s, k + 1, "=") && !is_type_name(s, k)) {
                var = k;
                break;
            }
        int L = a->nloop++;
        a->loop_var[L] = var;
        a->loop_begin[L] = i;
        a->loop_end[L] = stmt_end(s, close + 1, s->fn[s->tok[i].func].body_close);
        a->loop_cond_begin[L] = semi1 + 1;
        a->loop_cond_end[L] = semi2;
    }
    return 0;
}

/* The identifier `name` is a float variable declared in function f (any declaration
 * token of the same text inside the function or its parameter list). */
static int is_float_var(const nmo_ana *a, const nmo_src *s, int f, int tok)
{
    char name[64];
    tk_text(name, sizeof name, s, tok);
    const nmo_func *fn = &s->fn[f];
    int from = fn->body_open; /* from the parameter list: the ( matching the ) before { */
    int k = prev_sig(s, fn->body_open);
    if (k >= 0 && tk_is_punct(s, k, ")") && s->tok[k].match >= 0) from = s->tok[k].match;
    for (int i = from; i < fn->body_close; i++)
        if (a->is_float_decl[i] && tk_eq(s, i, name)) return 1;
    return 0;
}

/* ---------------------------------------------------------------- emitting */

typedef struct {
    nmo_mutation *m;
    int n, cap;
    int failed;
} mut_vec;

static void emit(mut_vec *v, const nmo_src *s, nmo_mop mop, int func, int at_tok, size_t off,
                 size_t len, const char *repl, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

static void emit(mut_vec *v, const nmo_src *s, nmo_mop mop, int func, int at_tok, size_t off,
                 size_t len, const char *repl, const char *fmt, ...)
{
    if (v->failed) return;
    /* identical edits once */
    for (int i = 0; i < v->n; i++)
        if (v->m[i].off == off && v->m[i].len == len && strcmp(v->m[i].repl, repl) == 0) return;
    /* a no-op edit is not a mutant */
    if (strlen(repl) == len && memcmp(s->text + off, repl, len) == 0) return;
    if (v->n == v->cap) {
        int nc = v->cap ? 2 * v->cap : 64;
        nmo_mutation *m = realloc(v->m, (size_t)nc * sizeof *m);
        if (!m) {
            v->failed = 1;
            return;
        }
        v->m = m;
        v->cap = nc;
    }
    nmo_mutation *m = &v->m[v->n];
    memset(m, 0, sizeof *m);
    m->mop = mop;
    snprintf(m->func, sizeof m->func, "%s", s->fn[func].name);
    m->line = s->tok[at_tok].line;
    m->col = s->tok[at_tok].col;
    m->off = off;
    m->len = len;
    m->repl = strdup(repl);
    if (!m->repl) {
        v->failed = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->desc, sizeof m->desc, fmt, ap);
    va_end(ap);
    v->n++;
}

/* Text of tokens [a, b] (inclusive) as in the source, whitespace collapsed; malloc'd. */
static char *span_text(const nmo_src *s, int a, int b)
{
    size_t o = (size_t)s->tok[a].off, e = (size_t)(s->tok[b].off + s->tok[b].len);
    char *r = malloc(e - o + 1);
    if (!r) return NULL;
    size_t k = 0;
    int sp = 0;
    for (size_t i = o; i < e; i++) {
        char c = s->text[i];
        if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
            if (!sp && k) r[k++] = ' ';
            sp = 1;
            continue;
        }
        sp = 0;
        r[k++] = c;
    }
    r[k] = '\0';
    return r;
}

static void short_text(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l < n) {
        memcpy(dst, src, l + 1);
        return;
    }
    snprintf(dst, n, "%.*s...", (int)(n - 4), src);
}

static int line_ok(const nmo_mut_filter *f, int line)
{
    if (!f || !f->covered) return 1;
    return line >= 0 && line < f->ncovered && f->covered[line];
}

static int func_ok(const nmo_mut_filter *f, const nmo_src *s, int func)
{
    if (func < 0) return 0;
    if (!f || !f->functions) return 1;
    for (int i = 0; i < f->nfunctions; i++)
        if (fnmatch(f->functions[i], s->fn[func].name, 0) == 0) return 1;
    return 0;
}

/* Format a perturbed floating literal like the original (suffix kept). */
static void fmt_float_lit(char *buf, size_t n, double v, const char *orig)
{
    size_t l = strlen(orig);
    char suf[4] = "";
    if (l && (orig[l - 1] == 'f' || orig[l - 1] == 'F' || orig[l - 1] == 'l' || orig[l - 1] == 'L'))
        suf[0] = orig[l - 1];
    int hex = l > 1 && orig[0] == '0' && (orig[1] == 'x' || orig[1] == 'X');
    if (hex) {
        snprintf(buf, n, "%a%s", v, suf);
        return;
    }
    char num[64];
    snprintf(num, sizeof num, "%.9g", v);
    if (!strpbrk(num, ".eEn")) strcat(num, ".0");
    snprintf(buf, n, "%s%s", num, suf);
}

/* Is the literal at i a floating literal? value in *v. */
static int float_literal(const nmo_src *s, int i, double *v, char *txt, size_t n)
{
    tk_text(txt, n, s, i);
    int hex = txt[0] == '0' && (txt[1] == 'x' || txt[1] == 'X');
    int isf = hex ? (strchr(txt, 'p') != NULL || strchr(txt, 'P') != NULL)
                  : strpbrk(txt, ".eE") != NULL;
    if (!isf) return 0;
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s", txt);
    size_t l = strlen(tmp);
    while (l && strchr("fFlL", tmp[l - 1])) tmp[--l] = '\0';
    char *end;
    errno = 0;
    *v = strtod(tmp, &end);
    return *end == '\0' && errno == 0 && isfinite(*v);
}

static int int_literal(const nmo_src *s, int i, long long *v, char *txt, size_t n)
{
    tk_text(txt, n, s, i);
    if (txt[0] == '0' && txt[1] && (txt[1] == 'x' || txt[1] == 'X')) return 0; /* masks */
    if (txt[0] == '0' && txt[1]) return 0;                                    /* octal */
    char *end;
    errno = 0;
    long long x = strtoll(txt, &end, 10);
    while (*end && strchr("uUlL", *end)) end++;
    if (*end || errno) return 0;
    *v = x;
    return 1;
}

/* Inside a declarator's array size: `float v[32]`, `float a, b[n]` (skip: resizing stack
 * arrays only smashes the stack). */
static int in_decl_brackets(const nmo_ana *a, const nmo_src *s, int i)
{
    int g = a->seg[i];
    if (g < 0) return 0;
    int b = a->seg_begin[g];
    while (tk_eq(s, b, "const") || tk_eq(s, b, "static")) b++;
    if (!is_type_name(s, b)) return 0;
    for (int k = i - 1; k >= b; k--) {
        if (!tk_is_punct(s, k, "[") || s->tok[k].match < i) continue;
        int name = prev_sig(s, k), before = prev_sig(s, name);
        return name >= 0 && s->tok[name].kind == NMO_TK_IDENT &&
               (is_type_name(s, before) || tk_is_punct(s, before, "*") || tk_is_punct(s, before, ","));
    }
    return 0;
}

/* A constant index into a struct's member array: a->in[0], c.param[1] (plumbing, not
 * arithmetic). */
static int member_subscript(const nmo_src *s, int i)
{
    int o = prev_sig(s, i);
    if (!tk_is_punct(s, o, "[") || !tk_is_punct(s, i + 1, "]")) return 0;
    int name = prev_sig(s, o), acc = prev_sig(s, name);
    return tk_is_punct(s, acc, "->") || tk_is_punct(s, acc, ".");
}

static int in_sizeof(const nmo_src *s, int i, int lo)
{
    for (int k = i - 1; k >= lo; k--)
        if (tk_is_punct(s, k, "(") && s->tok[k].match > i && tk_eq(s, k - 1, "sizeof")) return 1;
    return 0;
}

/* A `case` label or a switch: literals there are not numeric constants. */
static int in_case_label(const nmo_src *s, int i)
{
    int p = prev_sig(s, i);
    return p >= 0 && tk_eq(s, p, "case");
}

/* Enclosing loops of token i (indices into a->loop_*), innermost last. */
static int enclosing_loops(const nmo_ana *a, int i, int *out, int max)
{
    int n = 0;
    for (int L = 0; L < a->nloop && n < max; L++)
        if (a->loop_begin[L] < i && i <= a->loop_end[L] && a->loop_var[L] >= 0) out[n++] = L;
    return n;
}

/* The operand [b, e) is a product whose factors include a loop variable: a stride term. */
static int is_stride_term(const nmo_ana *a, const nmo_src *s, int b, int e)
{
    int mul = 0, var = 0, loops[16];
    int nl = enclosing_loops(a, b, loops, 16);
    for (int k = b; k < e; k++) {
        if ((tk_is_punct(s, k, "(") || tk_is_punct(s, k, "[")) && s->tok[k].match > k) {
            k = s->tok[k].match;
            continue;
        }
        if (is_binary_mul(s, k)) mul = 1;
        if (s->tok[k].kind == NMO_TK_IDENT)
            for (int q = 0; q < nl; q++)
                if (s->tok[a->loop_var[loops[q]]].len == s->tok[k].len &&
                    memcmp(s->text + s->tok[k].off, s->text + s->tok[a->loop_var[loops[q]]].off,
                           (size_t)s->tok[k].len) == 0)
                    var = 1;
    }
    return mul && var;
}

/* The loop whose condition clause holds token i, or -1. */
static int for_cond_loop(const nmo_ana *a, int i)
{
    for (int L = 0; L < a->nloop; L++)
        if (i >= a->loop_cond_begin[L] && i < a->loop_cond_end[L]) return L;
    return -1;
}

/* Token i is a comparison operator, or a constant compared, next to a knob field:
 * `c->assoc == 1` (variant selection of the emulation, not kernel arithmetic). */
static int knob_compare(const nmo_ana *a, const nmo_src *s, int i)
{
    static const char *const rel[] = {"==", "!=", "<", "<=", ">", ">=", NULL};
    int isrel = 0;
    for (int k = 0; rel[k]; k++) isrel |= tk_is_punct(s, i, rel[k]);
    if (isrel) return (i > 0 && a->knob[i - 1]) || (i + 3 < s->ntok && a->knob[i + 3]);
    if (s->tok[i].kind != NMO_TK_NUMBER) return 0;
    int p = prev_sig(s, i);
    int prel = 0, nrel = 0;
    for (int k = 0; rel[k]; k++) prel |= tk_is_punct(s, p, rel[k]), nrel |= tk_is_punct(s, i + 1, rel[k]);
    return (prel && p > 0 && a->knob[p - 1]) || (nrel && i + 4 < s->ntok && a->knob[i + 4]);
}

/* ---------------------------------------------------------------- the operators */

/* AOR: an arithmetic operator swapped (+ -, * /, their compound assignments). */
static void tok_aor(mut_vec *v, const nmo_src *s, const nmo_ana *a, const int *on, int fn, int i)
{
    const nmo_tok *t = &s->tok[i];
    size_t off = (size_t)t->off, len = (size_t)t->len;
    char txt[96];
    tk_text(txt, sizeof txt, s, i);
    (void)off, (void)len, (void)t, (void)a;
    if (on[NMO_MOP_AOR]) {
        static const char *const from[] = {"+", "-", "*", "/", "+=", "-=", "*=", "/=", NULL};
        static const char *const to[] = {"-", "+", "/", "*", "-=", "+=", "/=", "*=", NULL};
        for (int k = 0; from[k]; k++) {
            if (strcmp(txt, from[k]) != 0) continue;
            int ok = k >= 4 || (k < 2 ? is_binary_addsub(s, i)
                                      : k == 2 ? is_binary_mul(s, i)
                                               : ends_operand(s, prev_sig(s, i)));
            if (ok)
                emit(v, s, NMO_MOP_AOR, fn, i, off, len, to[k], "'%s' -> '%s'", from[k], to[k]);
        }
    }
}

/* ROR: a relational operator swapped; LB inside a for condition, with the loop bound
 * moved by one. */
static void tok_ror_lb(mut_vec *v, const nmo_src *s, const nmo_ana *a, const int *on, int fn, int i)
{
    const nmo_tok *t = &s->tok[i];
    size_t off = (size_t)t->off, len = (size_t)t->len;
    char txt[96];
    tk_text(txt, sizeof txt, s, i);
    (void)off, (void)len, (void)t;
    if (on[NMO_MOP_ROR] || on[NMO_MOP_LB]) {
        static const char *const from[] = {"<", "<=", ">", ">=", "==", "!=", NULL};
        static const char *const to[] = {"<=", "<", ">=", ">", "!=", "==", NULL};
        for (int k = 0; from[k]; k++) {
            if (strcmp(txt, from[k]) != 0) continue;
            int L = for_cond_loop(a, i);
            int incond = L >= 0;
            nmo_mop m = incond ? NMO_MOP_LB : NMO_MOP_ROR;
            if (on[m]) emit(v, s, m, fn, i, off, len, to[k], "'%s' -> '%s'", from[k], to[k]);
            /* loop bound +-1: for (...; i < E; ...) -> E - 1, E + 1 */
            if (incond && on[NMO_MOP_LB] && k < 4) {
                int eb = i + 1, ee = a->loop_cond_end[L]; /* [eb, ee) */
                if (eb < ee) {
                    char *et = span_text(s, eb, ee - 1);
                    if (et) {
                        size_t bo = (size_t)s->tok[eb].off;
                        size_t bl = (size_t)(s->tok[ee - 1].off + s->tok[ee - 1].len) - bo;
                        char rep[512], sh[96];
                        short_text(sh, sizeof sh, et);
                        snprintf(rep, sizeof rep, "(%s) - 1", et);
                        emit(v, s, NMO_MOP_LB, fn, eb, bo, bl, rep, "loop bound %s -> (%s) - 1", sh, sh);
                        snprintf(rep, sizeof rep, "(%s) + 1", et);
                        emit(v, s, NMO_MOP_LB, fn, eb, bo, bl, rep, "loop bound %s -> (%s) + 1", sh, sh);
                        free(et);
                    }
                }
            }
        }
    }
}

/* TERM / BCAST: one operand of a binary + or - dropped (BCAST when it is a stride term). */
static void tok_term(mut_vec *v, const nmo_src *s, const nmo_ana *a, const int *on, int fn, int i)
{
    const nmo_tok *t = &s->tok[i];
    size_t off = (size_t)t->off, len = (size_t)t->len;
    char txt[96];
    tk_text(txt, sizeof txt, s, i);
    (void)off, (void)len, (void)t;
    if ((on[NMO_MOP_TERM] || on[NMO_MOP_BCAST]) && is_binary_addsub(s, i)) {
        int lim_lo = s->fn[fn].body_open, lim_hi = s->fn[fn].body_close;
        int re = operand_end(s, i + 1, lim_hi);
        int ls = operand_start(s, i - 1, lim_lo);
        if (re > i + 1 && ls >= 0 && ls < i) {
            char *rt = span_text(s, i + 1, re - 1), *lt = span_text(s, ls, i - 1);
            if (rt && lt) {
                char sh[96], sh2[96];
                short_text(sh, sizeof sh, rt);
                short_text(sh2, sizeof sh2, lt);
                /* drop the right operand: "a + b" -> "a" */
                size_t o = off, l = (size_t)(s->tok[re - 1].off + s->tok[re - 1].len) - off;
                nmo_mop m = is_stride_term(a, s, i + 1, re) ? NMO_MOP_BCAST : NMO_MOP_TERM;
                if (on[m])
                    emit(v, s, m, fn, i, o, l, "", "drop term '%s %s' of '%s %s %s'", txt, sh, sh2,
                         txt, sh);
                /* drop the left operand of +: "a + b" -> "b" (not after a binary -) */
                int pl = prev_sig(s, ls);
                int after_minus = pl >= 0 && tk_is_punct(s, pl, "-") && ends_operand(s, prev_sig(s, pl));
                int after_unary = pl >= 0 && (tk_is_punct(s, pl, "-") || tk_is_punct(s, pl, "*") ||
                                              tk_is_punct(s, pl, "/"));
                if (tk_eq(s, i, "+") && !after_minus && !after_unary) {
                    size_t o2 = (size_t)s->tok[ls].off, l2 = (size_t)s->tok[i + 1].off - o2;
                    nmo_mop m2 = is_stride_term(a, s, ls, i) ? NMO_MOP_BCAST : NMO_MOP_TERM;
                    if (on[m2])
                        emit(v, s, m2, fn, ls, o2, l2, "", "drop term '%s' of '%s + %s'", sh2, sh2, sh);
                }
            }
            free(rt);
            free(lt);
        }
    }
}

/* IDX / BCAST on subscripts: the index moved by one, or replaced by another loop's
 * variable. */
static void tok_subscript(mut_vec *v, const nmo_src *s, const nmo_ana *a, const int *on, int fn, int i)
{
    const nmo_tok *t = &s->tok[i];
    size_t off = (size_t)t->off, len = (size_t)t->len;
    char txt[96];
    tk_text(txt, sizeof txt, s, i);
    (void)off, (void)len;
    if ((on[NMO_MOP_IDX] || on[NMO_MOP_BCAST]) && strcmp(txt, "[") == 0 && t->match > i + 1 &&
        ends_operand(s, prev_sig(s, i)) && !in_decl_brackets(a, s, i + 1)) {
        int close = t->match;
        int single_num = close == i + 2 && s->tok[i + 1].kind == NMO_TK_NUMBER;
        char *et = span_text(s, i + 1, close - 1);
        if (et && !single_num && on[NMO_MOP_IDX]) {
            char sh[96], rep[600];
            short_text(sh, sizeof sh, et);
            int simple = close == i + 2;
            size_t o = (size_t)s->tok[i + 1].off, l = (size_t)s->tok[close].off - o;
            snprintf(rep, sizeof rep, simple ? "%s + 1" : "(%s) + 1", et);
            emit(v, s, NMO_MOP_IDX, fn, i, o, l, rep, "index [%s] -> [%s]", sh, rep);
            snprintf(rep, sizeof rep, simple ? "%s - 1" : "(%s) - 1", et);
            emit(v, s, NMO_MOP_IDX, fn, i, o, l, rep, "index [%s] -> [%s]", sh, rep);
        }
        if (et && on[NMO_MOP_BCAST] && close == i + 2 && s->tok[i + 1].kind == NMO_TK_IDENT) {
            int loops[16], nl = enclosing_loops(a, i, loops, 16), mine = -1;
            for (int q = 0; q < nl; q++)
                if (s->tok[a->loop_var[loops[q]]].len == s->tok[i + 1].len &&
                    memcmp(s->text + s->tok[a->loop_var[loops[q]]].off, s->text + s->tok[i + 1].off,
                           (size_t)s->tok[i + 1].len) == 0)
                    mine = q;
            if (mine >= 0)
                for (int q = 0; q < nl; q++) {
                    if (q == mine) continue;
                    char other[64];
                    tk_text(other, sizeof other, s, a->loop_var[loops[q]]);
                    if (strcmp(other, et) == 0) continue;
                    emit(v, s, NMO_MOP_BCAST, fn, i + 1, (size_t)s->tok[i + 1].off,
                         (size_t)s->tok[i + 1].len, other, "broadcast index [%s] -> [%s]", et, other);
                }
        }
        free(et);
    }
}

/* CP / RWC on literals: a float constant halved, doubled or 0 -> 1; a power-of-two width
 * halved; another integer moved by one. */
static void tok_number(mut_vec *v, const nmo_src *s, const nmo_ana *a, const int *on, int fn, int i)
{
    const nmo_tok *t = &s->tok[i];
    size_t off = (size_t)t->off, len = (size_t)t->len;
    char txt[96];
    tk_text(txt, sizeof txt, s, i);
    (void)off, (void)len, (void)t, (void)txt, (void)a;
    double d;
    long long iv;
    char lit[96], rep[96];
    if (float_literal(s, i, &d, lit, sizeof lit)) {
        if (on[NMO_MOP_CP]) {
            if (d == 0.0) {
                fmt_float_lit(rep, sizeof rep, 1.0, lit);
                emit(v, s, NMO_MOP_CP, fn, i, off, len, rep, "constant %s -> %s", lit, rep);
            } else {
                fmt_float_lit(rep, sizeof rep, d * 0.5, lit);
                emit(v, s, NMO_MOP_CP, fn, i, off, len, rep, "constant %s -> %s (x0.5)", lit, rep);
                fmt_float_lit(rep, sizeof rep, d * 2.0, lit);
                emit(v, s, NMO_MOP_CP, fn, i, off, len, rep, "constant %s -> %s (x2)", lit, rep);
            }
        }
    } else if (int_literal(s, i, &iv, lit, sizeof lit)) {
        int pow2 = iv >= 8 && (iv & (iv - 1)) == 0;
        if (pow2 && on[NMO_MOP_RWC]) {
            snprintf(rep, sizeof rep, "%lld", iv / 2);
            emit(v, s, NMO_MOP_RWC, fn, i, off, len, rep, "width %s -> %s", lit, rep);
        } else if (!pow2 && on[NMO_MOP_CP] && iv <= 1 << 20) {
            snprintf(rep, sizeof rep, "%lld", iv + 1);
            emit(v, s, NMO_MOP_CP, fn, i, off, len, rep, "constant %s -> %s", lit, rep);
            int p0 = prev_sig(s, i);
            int step = tk_is_punct(s, p0, ">>=") || tk_is_punct(s, p0, "<<=") ||
                       tk_is_punct(s, p0, "+=") || tk_is_punct(s, p0, "-=") ||
                       tk_is_punct(s, p0, "*=") || tk_is_punct(s, p0, "/=");
            if (iv > 0 && !(iv == 1 && step)) { /* a zero step only hangs */
                snprintf(rep, sizeof rep, "%lld", iv - 1);
                emit(v, s, NMO_MOP_CP, fn, i, off, len, rep, "constant %s -> %s", lit, rep);
            }
        }
    }
}

/* RND: a rounding function or call swapped for the profile's other rounding. */
static void tok_ident(mut_vec *v, const nmo_src *s, const nmo_mut_profile *p, const int *on, int fn, int i)
{
    const nmo_tok *t = &s->tok[i];
    size_t off = (size_t)t->off, len = (size_t)t->len;
    char txt[96];
    tk_text(txt, sizeof txt, s, i);
    (void)off, (void)len, (void)t;
    for (int k = 0; k < p->nswap; k++)
        if (strcmp(txt, p->swap_from[k]) == 0)
            emit(v, s, NMO_MOP_RND, fn, i, off, len, p->swap_to[k], "rounding %s -> %s", txt,
                 p->swap_to[k]);
    for (int k = 0; k < p->ncall; k++)
        if (strcmp(txt, p->call_from[k]) == 0 && tk_is_punct(s, i + 1, "(") && s->tok[i + 1].match > 0) {
            int c = s->tok[i + 1].match;
            char *ct = span_text(s, i, c);
            size_t l = (size_t)(s->tok[c].off + s->tok[c].len) - off;
            if (ct) {
                char sh[96];
                short_text(sh, sizeof sh, ct);
                emit(v, s, NMO_MOP_RND, fn, i, off, l, p->call_to[k], "rounding %s -> %s", sh,
                     p->call_to[k]);
                free(ct);
            }
        }
}

static void gen_token_ops(mut_vec *v, const nmo_src *s, const nmo_ana *a, const nmo_mut_profile *p,
                          const nmo_mut_filter *f, const int *on)
{
    for (int i = 0; i < s->ntok; i++) {
        int fn = s->tok[i].func;
        if (fn < 0 || !func_ok(f, s, fn)) continue;
        if (i == s->fn[fn].body_open || i == s->fn[fn].body_close) continue;
        int g = a->seg[i];
        if (g < 0 || a->skip[g]) continue;
        if (!line_ok(f, s->tok[i].line)) continue;
        if (knob_compare(a, s, i)) continue;
        const nmo_tok *t = &s->tok[i];
        if (t->kind == NMO_TK_PUNCT) {
            tok_aor(v, s, a, on, fn, i);
            tok_ror_lb(v, s, a, on, fn, i);
            tok_term(v, s, a, on, fn, i);
            tok_subscript(v, s, a, on, fn, i);
        } else if (t->kind == NMO_TK_NUMBER && !in_case_label(s, i) && !in_decl_brackets(a, s, i) &&
                   !member_subscript(s, i) &&
                   !in_sizeof(s, i, s->fn[fn].body_open)) {
            tok_number(v, s, a, on, fn, i);
        } else if (t->kind == NMO_TK_IDENT && on[NMO_MOP_RND]) {
            tok_ident(v, s, p, on, fn, i);
        }
    }
}

/* Statement-level operators: SDL (delete an assignment/call statement), ACC (narrow an
 * accumulation), CP on named constants (`const float eps = ...;`). */
static void gen_stmt_ops(mut_vec *v, const nmo_src *s, const nmo_ana *a, const nmo_mut_profile *p,
                         const nmo_mut_filter *f, const int *on)
{
    static const char *const assign[] = {"=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "<<=", ">>=", NULL};
    static const char *const second_ok[] = {"=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "<<=",
                                            ">>=", "[", "(", ".", "->", "++", "--", NULL};
    for (int g = 0; g < a->nseg; g++) {
        if (a->skip[g]) continue;
        int b = a->seg_begin[g], e = a->seg_end[g];
        int fn = s->tok[b].func;
        if (fn < 0 || !func_ok(f, s, fn)) continue;
        /* statement start inside the segment: after control headers / else / do */
        for (;;) {
            if ((tk_eq(s, b, "if") || tk_eq(s, b, "for") || tk_eq(s, b, "while") || tk_eq(s, b, "switch")) &&
                tk_is_punct(s, b + 1, "(") && s->tok[b + 1].match > b && s->tok[b + 1].match < e) {
                b = s->tok[b + 1].match + 1;
                continue;
            }
            if (tk_eq(s, b, "else") || tk_eq(s, b, "do")) {
                b++;
                continue;
            }
            break;
        }
        if (b > e || !tk_is_punct(s, e, ";")) continue;
        if (!line_ok(f, s->tok[b].line)) continue;

        /* named constants: const float NAME = EXPR; */
        if (on[NMO_MOP_CP] && tk_eq(s, b, "const") && (tk_eq(s, b + 1, "float") || tk_eq(s, b + 1, "double")) &&
            s->tok[b + 2].kind == NMO_TK_IDENT && tk_is_punct(s, b + 3, "=") && b + 4 < e) {
            /* only a single declarator: no top-level comma */
            int single = 1;
            for (int k = b + 4; k < e; k++) {
                if ((tk_is_punct(s, k, "(") || tk_is_punct(s, k, "[")) && s->tok[k].match > k) {
                    k = s->tok[k].match;
                    continue;
                }
                if (tk_is_punct(s, k, ",")) single = 0;
            }
            if (single) {
                char name[64], *et = span_text(s, b + 4, e - 1);
                tk_text(name, sizeof name, s, b + 2);
                int isf = tk_eq(s, b + 1, "float");
                if (et) {
                    size_t o = (size_t)s->tok[b + 4].off;
                    size_t l = (size_t)(s->tok[e - 1].off + s->tok[e - 1].len) - o;
                    int eps = strstr(name, "eps") != NULL;
                    double fac[2] = {eps ? 10.0 : 2.0, eps ? 0.1 : 0.5};
                    for (int k = 0; k < 2; k++) {
                        char rep[600], sh[96];
                        short_text(sh, sizeof sh, et);
                        snprintf(rep, sizeof rep, "(%s) * %s%s", et, k == 0 ? (eps ? "10.0" : "2.0") : (eps ? "0.1" : "0.5"),
                                 isf ? "f" : "");
                        emit(v, s, NMO_MOP_CP, fn, b + 2, o, l, rep, "named constant %s = %s -> x%g", name, sh, fac[k]);
                    }
                    free(et);
                }
            }
        }

        if (s->tok[b].kind != NMO_TK_IDENT || is_keyword(s, b) || is_type_name(s, b)) continue;
        int second = b + 1, ok2 = 0;
        for (int k = 0; second_ok[k]; k++)
            if (tk_is_punct(s, second, second_ok[k])) ok2 = 1;
        if (!ok2) continue;

        /* SDL: replace the statement by ';' */
        if (on[NMO_MOP_SDL]) {
            char *st = span_text(s, b, e);
            if (st) {
                char sh[120];
                short_text(sh, sizeof sh, st);
                size_t o = (size_t)s->tok[b].off, l = (size_t)(s->tok[e].off + 1) - o;
                emit(v, s, NMO_MOP_SDL, fn, b, o, l, ";", "delete statement '%s'", sh);
                free(st);
            }
        }

        /* ACC: LHS op RHS; with LHS = name or name[...], a float variable, and the
         * statement an accumulation (compound, or RHS mentions LHS) */
        if (on[NMO_MOP_ACC]) {
            int lhs_end = b; /* last token of LHS */
            if (tk_is_punct(s, b + 1, "[") && s->tok[b + 1].match > 0) lhs_end = s->tok[b + 1].match;
            int op = lhs_end + 1, opk = -1;
            for (int k = 0; assign[k]; k++)
                if (tk_is_punct(s, op, assign[k])) opk = k;
            if ((opk == 0 || opk == 1 || opk == 2) && op + 1 < e && is_float_var(a, s, fn, b)) {
                char *lhs = span_text(s, b, lhs_end), *rhs = span_text(s, op + 1, e - 1);
                int acc = opk != 0;
                if (lhs && rhs && !acc) {
                    /* RHS mentions the LHS text as a token sequence */
                    int ll = lhs_end - b + 1;
                    for (int k = op + 1; k + ll <= e && !acc; k++) {
                        int same = 1;
                        for (int q = 0; q < ll && same; q++)
                            same = s->tok[k + q].len == s->tok[b + q].len &&
                                   memcmp(s->text + s->tok[k + q].off, s->text + s->tok[b + q].off,
                                          (size_t)s->tok[b + q].len) == 0;
                        acc = same;
                    }
                }
                if (lhs && rhs && acc) {
                    const char *helpers[2] = {p->round_bf16, p->round_fp16};
                    const char *hn[2] = {"bf16", "fp16"};
                    for (int k = 0; k < 2; k++) {
                        if (!helpers[k]) continue;
                        char rep[1200], sh[96];
                        short_text(sh, sizeof sh, rhs);
                        size_t o = (size_t)s->tok[op].off;
                        size_t l = (size_t)(s->tok[e - 1].off + s->tok[e - 1].len) - o;
                        if (opk == 0) snprintf(rep, sizeof rep, "= %s(%s)", helpers[k], rhs);
                        else snprintf(rep, sizeof rep, "= %s(%s %c (%s))", helpers[k], lhs, opk == 1 ? '+' : '-', rhs);
                        emit(v, s, NMO_MOP_ACC, fn, b, o, l, rep, "accumulator %s narrowed to %s after each update",
                             lhs, hn[k]);
                    }
                }
                free(lhs);
                free(rhs);
            }
        }
    }
}

static int cmp_mut(const void *x, const void *y)
{
    const nmo_mutation *a = x, *b = y;
    if (a->off != b->off) return a->off < b->off ? -1 : 1;
    if (a->mop != b->mop) return (int)a->mop - (int)b->mop;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return strcmp(a->repl, b->repl);
}

nmo_status nmo_mutate(nmo_mutation **out, int *n, const nmo_src *s, const nmo_mut_profile *p,
                      const nmo_mut_filter *f, nmo_err *err)
{
    *out = NULL;
    *n = 0;
    if (!p) p = &prof_c;
    int all_on[NMO_MOP_COUNT];
    for (int i = 0; i < NMO_MOP_COUNT; i++) all_on[i] = 1;
    const int *on = f && f->mop_on ? f->mop_on : all_on;
    nmo_ana a;
    if (analyze(&a, s, p) != 0) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    mut_vec v = {0};
    gen_token_ops(&v, s, &a, p, f, on);
    gen_stmt_ops(&v, s, &a, p, f, on);
    ana_free(&a);
    if (v.failed) {
        nmo_mutations_free(v.m, v.n);
        return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory generating mutants");
    }
    if (v.n > 1) qsort(v.m, (size_t)v.n, sizeof *v.m, cmp_mut);
    *out = v.m;
    *n = v.n;
    return NMO_OK;
}

void nmo_mutations_free(nmo_mutation *m, int n)
{
    for (int i = 0; i < n; i++) free(m[i].repl);
    free(m);
}

char *nmo_mutation_apply(const nmo_src *s, const nmo_mutation *m)
{
    size_t rl = strlen(m->repl);
    size_t n = s->len - m->len + rl;
    char *r = malloc(n + 1);
    if (!r) return NULL;
    memcpy(r, s->text, m->off);
    memcpy(r + m->off, m->repl, rl);
    memcpy(r + m->off + rl, s->text + m->off + m->len, s->len - m->off - m->len);
    r[n] = '\0';
    return r;
}

/* ---------------------------------------------------------------- diffs */

typedef struct {
    const char **p;
    int *l;
    int n;
} lines_t;

static int split_lines(lines_t *L, const char *t)
{
    int cap = 0;
    L->n = 0;
    L->p = NULL;
    L->l = NULL;
    const char *q = t;
    while (*q) {
        const char *e = strchr(q, '\n');
        int len = e ? (int)(e - q) : (int)strlen(q);
        if (L->n == cap) {
            cap = cap ? 2 * cap : 256;
            const char **np = realloc(L->p, (size_t)cap * sizeof *np);
            int *nl = realloc(L->l, (size_t)cap * sizeof *nl);
            if (!np || !nl) {
                free(np ? (void *)np : (void *)L->p);
                free(nl ? nl : L->l);
                return -1;
            }
            L->p = np;
            L->l = nl;
        }
        L->p[L->n] = q;
        L->l[L->n] = len;
        L->n++;
        q = e ? e + 1 : q + len;
    }
    return 0;
}

static int same_line(const lines_t *A, int i, const lines_t *B, int j)
{
    return A->l[i] == B->l[j] && memcmp(A->p[i], B->p[j], (size_t)A->l[i]) == 0;
}

char *nmo_mutation_diff(const nmo_src *s, const nmo_mutation *m, const char *label)
{
    char *mt = nmo_mutation_apply(s, m);
    if (!mt) return NULL;
    lines_t A, B;
    if (split_lines(&A, s->text) != 0 || split_lines(&B, mt) != 0) {
        free(mt);
        return NULL;
    }
    int pre = 0;
    while (pre < A.n && pre < B.n && same_line(&A, pre, &B, pre)) pre++;
    int suf = 0;
    while (suf < A.n - pre && suf < B.n - pre && same_line(&A, A.n - 1 - suf, &B, B.n - 1 - suf)) suf++;
    int ctx = 3;
    int a0 = pre - ctx < 0 ? 0 : pre - ctx;
    int a1 = A.n - suf + ctx > A.n ? A.n : A.n - suf + ctx; /* exclusive */
    int b1 = B.n - suf + ctx > B.n ? B.n : B.n - suf + ctx;
    size_t cap = 256 + 2 * strlen(label);
    for (int i = a0; i < a1; i++) cap += (size_t)A.l[i] + 2;
    for (int i = a0; i < b1; i++) cap += (size_t)B.l[i] + 2;
    char *d = malloc(cap), *w = d;
    if (!d) {
        free(mt), free(A.p), free(A.l), free(B.p), free(B.l);
        return NULL;
    }
    w += sprintf(w, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", label, label, a0 + 1, a1 - a0, a0 + 1, b1 - a0);
    for (int i = a0; i < pre; i++) w += sprintf(w, " %.*s\n", A.l[i], A.p[i]);
    for (int i = pre; i < A.n - suf; i++) w += sprintf(w, "-%.*s\n", A.l[i], A.p[i]);
    for (int i = pre; i < B.n - suf; i++) w += sprintf(w, "+%.*s\n", B.l[i], B.p[i]);
    for (int i = A.n - suf; i < a1; i++) w += sprintf(w, " %.*s\n", A.l[i], A.p[i]);
    free(mt), free(A.p), free(A.l), free(B.p), free(B.l);
    return d;
}
