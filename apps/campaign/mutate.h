/* numoracle campaign: the mutation engine — a small C tokenizer and source-level mutation
 * operators over kernel sources (the CPU emulations in refs/cand today; HIP sources
 * through the `hip` profile). No C parser: tokens, bracket matching, function bodies,
 * statement and operand extents found by precedence-aware scanning. Every mutation is a
 * replacement of one byte range of one file by new text, so a mutant is (file, range,
 * text) and its diff is one hunk. */
#ifndef NMO_CAMPAIGN_MUTATE_H
#define NMO_CAMPAIGN_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "numoracle/status.h"

typedef enum {
    NMO_TK_IDENT = 0,
    NMO_TK_NUMBER,
    NMO_TK_STRING,
    NMO_TK_CHAR,
    NMO_TK_PUNCT,
    NMO_TK_PP /* a whole preprocessor directive, continuation lines included */
} nmo_tk_kind;

typedef struct {
    nmo_tk_kind kind;
    int off, len;   /* bytes in the source text */
    int line, col;  /* 1-based */
    int func;       /* index of the function whose body holds the token, -1 outside */
    int match;      /* matching bracket token for ( ) [ ] { }, -1 otherwise */
} nmo_tok;

typedef struct {
    char name[64];
    int body_open, body_close; /* token indices of the body's { and } */
    int line_begin, line_end;
} nmo_func;

typedef struct {
    char path[512];  /* as given (used in locations and diffs) */
    char *text;
    size_t len;
    nmo_tok *tok;
    int ntok;
    nmo_func *fn;
    int nfn;
    /* type names seen in typedefs (used to tell `T *p` declarations from products) */
    char (*types)[64];
    int ntypes;
} nmo_src;

/* Tokenize text (copied) and find function bodies. path names the file in reports. */
nmo_status nmo_src_parse(nmo_src *s, const char *path, const char *text, size_t len, nmo_err *err);
nmo_status nmo_src_load(nmo_src *s, const char *path, nmo_err *err);
void nmo_src_free(nmo_src *s);
/* Add the typedef names of another source (e.g. the public headers) to s's type set. */
void nmo_src_add_types(nmo_src *s, const nmo_src *from);

/* Mutation operators (the `mutop` of a mutant). */
typedef enum {
    NMO_MOP_AOR = 0, /* arithmetic operator replacement: + - * / and compound forms */
    NMO_MOP_ROR,     /* relational operator replacement: < <= > >= == != */
    NMO_MOP_LB,      /* loop bound off by one: for (...; i < n; ...) -> n - 1, n + 1, <= */
    NMO_MOP_CP,      /* constant perturbation: literals x0.5 x2 (0 -> 1), named constants */
    NMO_MOP_RWC,     /* reduction-width change: power-of-two literal >= 8 halved (32 -> 16) */
    NMO_MOP_ACC,     /* accumulator narrowing: acc = round16(acc + ...) (bf16 / fp16) */
    NMO_MOP_RND,     /* rounding-intrinsic swap: RN store/conversion -> truncation */
    NMO_MOP_SDL,     /* statement deletion: an assignment or call statement */
    NMO_MOP_TERM,    /* drop a term of a sum: a + b -> a, b; a - b -> a (eps, max, ...) */
    NMO_MOP_IDX,     /* index shift: x[e] -> x[e + 1], x[e - 1] */
    NMO_MOP_BCAST,   /* wrong broadcast stride: x[i] -> x[j] (other loop variable), row
                        offset i*N dropped (stride 0) */
    NMO_MOP_COUNT
} nmo_mop;

const char *nmo_mop_name(nmo_mop m);
int nmo_mop_from_name(const char *name); /* -1 if unknown */

/* Language profile: the names mutation operators need. */
typedef struct {
    const char *name;            /* "c" or "hip" */
    const char *round_bf16;      /* accumulator narrowing helpers: float -> float */
    const char *round_fp16;
    int nswap;                   /* rounding-intrinsic swaps: identifier -> identifier */
    const char *swap_from[24], *swap_to[24];
    int ncall;                   /* call replacements: NAME(...) -> text */
    const char *call_from[8], *call_to[8];
    const char *knob_suffix;     /* pointer parameters whose type name ends so (the
                                    emulation's variant-selection config, e.g. rms_cfg)
                                    are knobs: comparisons and constants tested against
                                    their fields select another emulated kernel and are
                                    not mutated */
    int nskip;                   /* statements holding one of these identifiers are not
                                    mutated (error paths, allocation, frees) */
    const char *skip[16];
} nmo_mut_profile;

const nmo_mut_profile *nmo_mut_profile_get(const char *name); /* "c", "hip"; NULL if unknown */

typedef struct {
    nmo_mop mop;
    char desc[192];      /* "'*' -> '/'" */
    char func[64];       /* enclosing function */
    int line, col;       /* 1-based, in the file */
    size_t off, len;     /* replaced byte range */
    char *repl;          /* replacement text (malloc'd) */
} nmo_mutation;

typedef struct {
    /* enabled mutation operators (1 each); NULL: all */
    const int *mop_on;
    /* functions allowed, shell patterns (NULL: all functions of the file) */
    const char *const *functions;
    int nfunctions;
    /* lines allowed: covered[line] != 0 (NULL: every line); ncovered = array size */
    const unsigned char *covered;
    int ncovered;
} nmo_mut_filter;

/* Generate every mutation of s under the filter. *out is malloc'd (free with
 * nmo_mutations_free). Order: by position, then operator; deterministic. */
nmo_status nmo_mutate(nmo_mutation **out, int *n, const nmo_src *s, const nmo_mut_profile *p,
                      const nmo_mut_filter *f, nmo_err *err);
void nmo_mutations_free(nmo_mutation *m, int n);

/* The mutated text of s (malloc'd, NUL-terminated). */
char *nmo_mutation_apply(const nmo_src *s, const nmo_mutation *m);
/* Unified diff (one hunk, 3 lines of context) between s and the mutated text; label is
 * the path used on the ---/+++ lines. malloc'd. */
char *nmo_mutation_diff(const nmo_src *s, const nmo_mutation *m, const char *label);

/* 64-bit FNV-1a, for stable ids. */
uint64_t nmo_fnv1a(const void *data, size_t n, uint64_t h);
#define NMO_FNV_INIT 0xcbf29ce484222325ULL

#endif
