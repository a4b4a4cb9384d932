/* numoracle: named plan presets — what the libraries people run do, per operator.
 *
 * A preset is a set of plan fields for every operator plus fields for some operators;
 * `--plan 'preset=NAME field=value ...'` applies the preset's fields for the operator
 * first and the explicit fields on top. "inter=io" stands for the operator's storage
 * format (plan `in`): an eager implementation stores each intermediate tensor in the
 * dtype of its inputs. Where a figure comes from is written next to it; what each
 * operator's `inter` rounds is written at the top of refs/<op>.c. `numoracle plans`
 * prints this table. */
#include <stdio.h>
#include <string.h>

#include "numoracle/plan.h"
#include "nmo_internal.h"

typedef struct {
    const char *ops;    /* comma-separated operator names, "*" for every operator */
    const char *fields; /* plan text ("inter=io": the storage dtype) */
} preset_rule;

#define NMO_PRESET_RULES 8
typedef struct {
    const char *name;
    const char *summary;
    const char *sources;
    preset_rule rules[NMO_PRESET_RULES];
} preset;

/* The ops whose eager PyTorch form runs several kernels, each storing its result in the
 * dtype (measured on the H200, hip/results/: e.g. F.silu(a) * b rounds silu(a) to bf16;
 * F.cross_entropy = nll_loss(log_softmax(x)) stores the log-probabilities and the
 * gradient of nll_loss in bf16; _softmax_backward_data stores grad*output; group_norm
 * stores mean and rstd in the input dtype). */
#define EAGER_OPS "swiglu,geglu,swiglu_bwd,geglu_bwd,rope,rope_bwd,cross_entropy,cross_entropy_bwd," \
                  "softmax_bwd,kl_div,group_norm"

static const preset presets[] = {
    {"torch-eager",
     "PyTorch eager on CUDA (ATen kernels): fp32 math in fused kernels, CUDA libm accuracy; "
     "compositions of several kernels store each intermediate in the dtype",
     "fn=cuda: ATen builds without fast math (CUDA C Programming Guide maxima); the "
     "intermediate roundings were found bit-exact against PyTorch 2.11 on an H200 "
     "(hip/validate/torch_suite.py)",
     {{"*", "fn=cuda"}, {EAGER_OPS, "inter=io"}}},
    {"hf-llama",
     "Hugging Face transformers eager modules (LlamaRMSNorm, apply_rotary_pos_emb, LlamaMLP) "
     "and Liger's 'llama' casting: the normalized x cast to the dtype before the weight",
     "transformers LlamaRMSNorm.forward: `w * h.to(input_dtype)`; autograd through it; "
     "act_fn(gate) * up in the dtype",
     {{"*", "fn=cuda"},
      {"rms_norm,rms_norm_bwd,fused_add_rms_norm,rope,rope_bwd,swiglu,swiglu_bwd,geglu,geglu_bwd",
       "inter=io"}}},
    {"torch-compile",
     "torch.compile (Inductor to Triton): one fused kernel, fp32 throughout, libdevice "
     "accuracy, FMA contraction allowed (every reference covers FMA or not)",
     "Inductor keeps fp32 between fused stages (no emulate_precision_casts); its exp/log go "
     "through libdevice: outputs of softmax, silu and gelu for |x| up to 70 pass fn=cuda on "
     "the H200 (hip/results/); cross_entropy: Inductor keeps the decomposition's "
     "log_softmax buffer in the dtype (fp16 label_smoothing outputs on the H200 FAIL the "
     "fused plan and are reachable under inter=io)",
     {{"*", "fn=cuda"}, {"cross_entropy", "inter=io"}}},
    {"triton",
     "hand-written Triton kernels: fp32 math, Triton's approximate exp/log/div/sqrt "
     "(ex2.approx of a log2(e)-scaled argument and friends)",
     "fn=triton (plan.c): tl.exp lowers to ex2.approx.f32 of x*log2(e), the __expf "
     "mechanism, whose error grows with |x| (measured: 54 fp32 ulps at x = -70 on the H200)",
     {{"*", "fn=triton"}}},
    {"liger",
     "Liger-Kernel's Triton operators: the triton preset plus Liger's casts (silu(a) and "
     "gelu(a) cast to b's dtype, the 'llama' casting of rms_norm, rope in the dtype)",
     "linkedin/Liger-Kernel src/liger_kernel/ops: swiglu.py `silu(a).cast(b.dtype) * b`, "
     "geglu.py `geglu_a.cast(b.dtype) * b`, rms_norm.py _CASTING_MODE_LLAMA, rope.py",
     {{"*", "fn=triton"},
      {"rms_norm,rms_norm_bwd,fused_add_rms_norm,swiglu,swiglu_bwd,geglu,geglu_bwd,rope,rope_bwd",
       "inter=io"}}},
    {"liger-tl-sum",
     "the liger preset plus the reduction geometry of Liger's single-block row kernels "
     "(rms_norm, layer_norm): tl.sum over BLOCK = next_pow2(N) <= 65536 lanes",
     "Liger-Kernel ops/utils.py calculate_settings: BLOCK_SIZE = next_power_of_2(n) <= "
     "MAX_FUSED_SIZE 65536, num_warps 4 (< 2048), 8 (< 8192), 16 (< 32768), 32 (16 on HIP); "
     "rms_norm.py / layer_norm.py reduce each row with one tl.sum over the block. Triton's "
     "ReduceOpToLLVM.cpp (lib/Conversion/TritonGPUToLLVM, 3.x) folds the elements a thread "
     "holds (in order or as a tree), then a butterfly shuffle over the 32 (64 on AMD) lanes, "
     "then the warps' partials through shared memory by another butterfly: at most "
     "BLOCK/threads <= 64 terms per thread and a tree of depth <= log2(threads) <= 10, i.e. "
     "sum=blocked:64:10 for every N the kernels accept (a row beyond 65536 is an error)",
     {{"*", "fn=triton"},
      {"rms_norm,rms_norm_bwd,fused_add_rms_norm,swiglu,swiglu_bwd,geglu,geglu_bwd,rope,rope_bwd",
       "inter=io"},
      {"rms_norm,layer_norm", "sum=blocked:64:10"}}},
    {"torch-reduce",
     "PyTorch's CUDA reduction kernels (ATen Reduce.cuh: torch.sum/mean over the last, "
     "contiguous axis): the torch-eager preset plus their reduction geometry",
     "aten/src/ATen/native/cuda/Reduce.cuh (ReduceConfig, ReduceOp::thread_reduce, "
     "block_y_reduce, block_x_reduce, global_reduce; read at pytorch commit 00ef8f06): at most "
     "MAX_NUM_THREADS = 512 threads a block (block_width = min(last_pow2(N), 32) lanes over "
     "the reduced axis, so at least 32 of them stride over a row of N >= 32); a thread folds "
     "the terms j = t, t + step, ... (step >= 32) into vt0 = 4 accumulators combined at the "
     "end: a run of <= ceil(N/32) terms in any order (+12: newer versions load 4-element "
     "vectors, 4 ceil(N/128) <= ceil(N/32) + 3, an unaligned head, rows N < 128 of <= 8 "
     "terms a thread); block_y_reduce and block_x_reduce (shared-memory halving, then "
     "shfl_down 1..16) are trees of depth log2(threads) <= 9; with global_reduce the "
     "blocks' partials are combined by the last block, any order here, ctas_per_output <= "
     "65535 (the grid's y limit). Rows of 2^31 elements or more (TensorIterator's 32-bit "
     "split, more partials) are not covered",
     {{"*", "fn=cuda"}, {EAGER_OPS, "inter=io"}, {"reduction", "sum=blocked:n/32+12:9:65535"}}},
    {"cublas",
     "cuBLAS/cuBLASLt GEMMs on Hopper tensor cores: exact products, fp32 block "
     "accumulation in blocks of 16 (the wider of the validated block models)",
     "sum=mma:16: Fasi, Higham, Mikaitis & Pranesh 2021 (tensor cores align and truncate "
     "within a block); bf16/fp16 GEMMs of cuBLAS 13 on the H200 pass mma:16 and mma:32 "
     "(hip/results/h200-2026-11-30)",
     {{"*", "fn=cuda"}, {"matmul,matmul_bwd", "sum=mma:16"}}},
    {"cublas-rpr",
     "cuBLAS with allow_bf16/fp16_reduced_precision_reduction: split-K partial sums may be "
     "stored in the output format before they are added",
     "PyTorch torch.backends.cuda.matmul.allow_{bf16,fp16}_reduced_precision_reduction; "
     "matmul's inter rounds the partials (refs/matmul.c)",
     {{"*", "fn=cuda"}, {"matmul,matmul_bwd", "sum=mma:16 inter=io"}}},
    {"cudnn",
     "cuDNN convolutions and normalizations: implicit GEMM, fused affine forms",
     "conv2d's reference does not model tensor-core block accumulation yet (it rejects "
     "sum=mma): any order (cuDNN 9.19 fp32/bf16/fp16 convolutions on the H200 pass it); the "
     "batchnorm and conv epilogues' fused scale/shift forms are in the references' hulls",
     {{"*", "fn=cuda"}}},
    {"flash-attention",
     "FlashAttention-2/3 (PyTorch's flash SDPA backend): P cast to the dtype before P.V, dS "
     "before dQ/dK, exp2 of a log2(e)-prescaled argument, online softmax over key blocks; "
     "GQA key/value gradients summed over the query heads in the dtype",
     "FA2 paper (Dao 2023) and flash_fwd/bwd kernels: P and dS converted to the input type "
     "for the tensor-core products; exp2f of an FMA-scaled argument has __expf's error "
     "(fn=triton's exp); torch expands k, v for GQA and sums their gradients in the dtype; "
     "the attention references do not model tensor-core block accumulation yet (they reject "
     "sum=mma): any order",
     {{"*", "fn=cuda"}, {"sdpa,sdpa_bwd", "fn=triton inter=io"}}},
    {"mem-efficient-attention",
     "PyTorch's memory-efficient SDPA (CUTLASS kernels): as flash-attention",
     "the same rounding points as flash-attention (P in the dtype for P.V)",
     {{"*", "fn=cuda"}, {"sdpa,sdpa_bwd", "fn=triton inter=io"}}},
    {"cudnn-attention",
     "cuDNN SDPA (PyTorch's cudnn backend): as flash-attention",
     "the same rounding points as flash-attention (P in the dtype for P.V)",
     {{"*", "fn=cuda"}, {"sdpa,sdpa_bwd", "fn=triton inter=io"}}},
    {"math-sdpa",
     "PyTorch's math SDPA: the reference composition in fp32 math (upcast), P kept in fp32",
     "aten _scaled_dot_product_attention_math upcasts half types; matmuls through cuBLAS",
     {{"*", "fn=cuda"}}},
};

#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))

int nmo_preset_count(void) { return NPRESETS; }

const char *nmo_preset_name(int i) { return i >= 0 && i < NPRESETS ? presets[i].name : NULL; }

static const preset *find(const char *name)
{
    for (int i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0) return &presets[i];
    return NULL;
}

static int op_listed(const char *list, const char *op)
{
    if (strcmp(list, "*") == 0) return 1;
    size_t n = strlen(op);
    for (const char *s = list; *s;) {
        size_t k = strcspn(s, ",");
        if (k == n && strncmp(s, op, n) == 0) return 1;
        s += k + (s[k] == ',');
    }
    return 0;
}

/* Rule r's plan text, "inter=io" spelt with the storage format. Each rule is parsed on
 * its own (an overlay): a later rule (sdpa's fn=triton) overrides an earlier one's field
 * (every op's fn=cuda) without the text naming a field twice. */
static void rule_text(const preset_rule *ru, nmo_fmt io, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (const char *s = ru->fields; *s && off + 1 < n;) {
        if (strncmp(s, "inter=io", 8) == 0 && (s[8] == ' ' || s[8] == '\0')) {
            off += (size_t)snprintf(buf + off, n - off, "inter=%s", nmo_fmt_name(io));
            s += 8;
        } else {
            buf[off++] = *s++;
            buf[off] = '\0';
        }
    }
}

nmo_status nmo_plan_parse_op(nmo_plan *p, const char *op, const char *text, nmo_err *err)
{
    if (!p || !text) return nmo_err_set(err, NMO_ERR_USAGE, "plan: no plan or text");
    /* find preset=NAME (at most once), keep the rest */
    char rest[1024], name[32] = "";
    size_t off = 0;
    int seen = 0;
    for (const char *s = text; *s;) {
        while (*s == ' ' || *s == '\t') s++;
        size_t k = strcspn(s, " \t");
        if (k == 0) break;
        if (k > 7 && strncmp(s, "preset=", 7) == 0) {
            if (seen++) return nmo_err_set(err, NMO_ERR_PARSE, "plan: preset given twice in '%s'", text);
            if (k - 7 >= sizeof name)
                return nmo_err_set(err, NMO_ERR_PARSE, "plan: unknown preset '%.*s' in '%s'", (int)(k - 7), s + 7, text);
            snprintf(name, sizeof name, "%.*s", (int)(k - 7), s + 7);
        } else {
            if (off + k + 2 > sizeof rest) return nmo_err_set(err, NMO_ERR_PARSE, "plan: text too long: '%s'", text);
            memcpy(rest + off, s, k);
            off += k;
            rest[off++] = ' ';
        }
        s += k;
    }
    if (off) off--; /* the last separator */
    rest[off] = '\0';
    if (!seen) return nmo_plan_parse(p, text, err); /* messages quote the user's text */
    nmo_plan q = *p;
    {
        const preset *ps = find(name);
        if (!ps) {
            char list[512];
            size_t lo = 0;
            for (int i = 0; i < NPRESETS && lo < sizeof list; i++)
                lo += (size_t)snprintf(list + lo, sizeof list - lo, i ? ", %s" : "%s", presets[i].name);
            return nmo_err_set(err, NMO_ERR_PARSE, "plan: unknown preset '%s' (known: %s; see numoracle plans)",
                               name, list);
        }
        for (int r = 0; r < NMO_PRESET_RULES && ps->rules[r].ops; r++) {
            if (op && !op_listed(ps->rules[r].ops, op)) continue;
            char pt[512];
            rule_text(&ps->rules[r], q.in, pt, sizeof pt);
            nmo_status st = nmo_plan_parse(&q, pt, err);
            if (st != NMO_OK) return st;
        }
        snprintf(q.preset, sizeof q.preset, "%s", ps->name);
    }
    nmo_status st = nmo_plan_parse(&q, rest, err);
    if (st != NMO_OK) return st;
    *p = q;
    return NMO_OK;
}

void nmo_preset_print(FILE *f, const char *only)
{
    for (int i = 0; i < NPRESETS; i++) {
        const preset *ps = &presets[i];
        if (only && strcmp(only, ps->name) != 0) continue;
        fprintf(f, "%s: %s\n", ps->name, ps->summary);
        for (int r = 0; r < NMO_PRESET_RULES && ps->rules[r].ops; r++)
            fprintf(f, "  %-24s %s\n", strcmp(ps->rules[r].ops, "*") == 0 ? "every operator" : ps->rules[r].ops,
                    ps->rules[r].fields);
        fprintf(f, "  source: %s\n\n", ps->sources);
    }
    fprintf(f, "inter=io: the operator's storage dtype (plan in). Use: --plan 'preset=NAME [field=value ...]'; "
               "fields given after the preset override it.\n");
}

cJSON *nmo_preset_json(void)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < NPRESETS; i++) {
        const preset *ps = &presets[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", ps->name);
        cJSON_AddStringToObject(o, "summary", ps->summary);
        cJSON_AddStringToObject(o, "sources", ps->sources);
        cJSON *rs = cJSON_AddArrayToObject(o, "rules");
        for (int r = 0; r < NMO_PRESET_RULES && ps->rules[r].ops; r++) {
            cJSON *ro = cJSON_CreateObject();
            cJSON_AddStringToObject(ro, "ops", ps->rules[r].ops);
            cJSON_AddStringToObject(ro, "fields", ps->rules[r].fields);
            cJSON_AddItemToArray(rs, ro);
        }
        cJSON_AddItemToArray(a, o);
    }
    return a;
}
