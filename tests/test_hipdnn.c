/* hipDNN's graph JSON read as hipDNN writes it (issue 20): every fixture graph under
 * tests/hipdnn/graphs/ (small graphs modelled on the schema of hipDNN's reference data
 * and sample graphs) either binds to the operator with the parameters hipDNN's form
 * carries (epsilon from a value tensor, SDPA's causal flag and scale, the reduction
 * mode), or is refused as "unsupported operation" with NMO_ERR_UNKNOWN_OP, which the
 * runner turns into a per-case SKIP. NMO_SRC (the source root) comes from meson. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>

#include <cjson/cJSON.h>

#include "numoracle/bundle.h"

static nmo_status read_fixture(nmo_graph *g, const char *name, nmo_err *err)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/tests/hipdnn/graphs/%s.json", getenv("NMO_SRC"), name);
    return nmo_graph_read(g, p, err);
}

static double param(const nmo_graph *g, const char *name)
{
    for (int k = 0; k < g->op->n_param; k++)
        if (strcmp(g->op->param[k].name, name) == 0) return g->param[k];
    cr_assert_fail("op %s has no parameter %s", g->op->name, name);
    return NAN;
}

Test(hipdnn, layernorm_epsilon_from_a_value_tensor)
{
    nmo_graph g;
    nmo_err e;
    cr_assert_eq(read_fixture(&g, "layernorm_inference", &e), NMO_OK, "%s", e.msg);
    cr_expect_str_eq(g.op->name, "layer_norm");
    /* the fixture's 1e-5 is also layer_norm's default: a second graph tells them apart */
    cr_expect_eq(param(&g, "eps"), 1e-5);
    cr_assert_eq(read_fixture(&g, "rmsnorm_last_dim_half", &e), NMO_OK, "%s", e.msg);
    cr_expect_str_eq(g.op->name, "rms_norm");
    cr_expect_eq(g.io_dt, NMO_FP16, "lower-case 'half'");
    cr_expect_eq(param(&g, "eps"), 1e-6);
    /* the scale [1, 32] is rms_norm's w [32]; the value tensor is not an operator tensor */
    cr_expect_eq(g.t[g.in_t[1]].uid, 2);
    cr_expect_eq(g.t[g.out_t[0]].uid, 4);
    /* a non-null bias_tensor_uid selects rms_norm_bias: the bias [1,1,16] is its b [16] */
    cr_assert_eq(read_fixture(&g, "rmsnorm_bias_last_dim", &e), NMO_OK, "%s", e.msg);
    cr_expect_str_eq(g.op->name, "rms_norm_bias");
    cr_expect_eq(g.io_dt, NMO_BF16, "lower-case 'bfloat16'");
    cr_expect_eq(param(&g, "eps"), 1e-5);
    cr_expect_eq(g.t[g.in_t[2]].uid, 4);
}

Test(hipdnn, epsilon_value_is_read_not_defaulted)
{
    /* the same graph with another epsilon: the parameter follows the value */
    const char *txt =
        "{\"io_data_type\": \"float\", \"tensors\": ["
        "{\"uid\": 1, \"dims\": [2, 8], \"strides\": [8, 1], \"data_type\": \"float\"},"
        "{\"uid\": 2, \"dims\": [8], \"data_type\": \"float\"},"
        "{\"uid\": 3, \"dims\": [1], \"data_type\": \"double\", \"value\": 0.25, \"value_type\": \"Float64Value\"},"
        "{\"uid\": 4, \"dims\": [2, 8], \"data_type\": \"float\"}],"
        "\"nodes\": [{\"name\": \"n\", \"type\": \"RMSNormAttributes\", \"inputs\": {\"x_tensor_uid\": 1,"
        " \"scale_tensor_uid\": 2, \"epsilon_tensor_uid\": 3, \"bias_tensor_uid\": null},"
        " \"outputs\": {\"y_tensor_uid\": 4, \"inv_rms_tensor_uid\": null}}]}";
    cJSON *j = cJSON_Parse(txt);
    nmo_graph g;
    nmo_err e;
    cr_assert_eq(nmo_graph_parse(&g, j, "g.json", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "eps"), 0.25);
    cJSON_Delete(j);
}

Test(hipdnn, older_type_names_and_reduction_mode)
{
    nmo_graph g;
    nmo_err e;
    cr_assert_eq(read_fixture(&g, "reduction_add_last", &e), NMO_OK, "%s", e.msg);
    cr_expect_str_eq(g.op->name, "reduction");
    cr_expect_eq(param(&g, "kind"), 0, "ADD is the sum");
    /* io_type/compute_type (hipDNN's reference data) read as io_data_type/compute_data_type;
     * batchnorm with mean and inv_variance is its own operator */
    cr_assert_eq(read_fixture(&g, "batchnorm_inference_inv_variance", &e), NMO_OK, "%s", e.msg);
    cr_expect_str_eq(g.op->name, "batchnorm_invvar_inference");
    cr_expect_eq(g.io_dt, NMO_FP32, "io_type");
    cr_expect_eq(g.t[g.in_t[2]].uid, 2, "inv_variance_tensor_uid is the operator's inv_variance");
}

/* Every fixture loads: it binds, or it is refused as an unsupported operation (the
 * runner's per-case SKIP); never another loader error. The bound ones are listed. */
Test(hipdnn, every_fixture_binds_or_is_unsupported)
{
    static const char *const bound[][2] = {
        {"batchnorm_reference_data_form", "batchnorm_invvar_inference"},
        {"batchnorm_inference_inv_variance", "batchnorm_invvar_inference"},
        {"batchnorm_5d_channels_last", "batchnorm_invvar_inference"},
        {"batchnorm_variance_ext", "batchnorm_inference"},
        {"batchnorm_mixed_dtype", "batchnorm_invvar_inference"},
        {"layernorm_inference", "layer_norm"},
        {"layernorm_backward", "layer_norm_bwd"},
        {"rmsnorm_last_dim_half", "rms_norm"},
        {"rmsnorm_bias_last_dim", "rms_norm_bias"},
        {"rmsnorm_backward", "rms_norm_bwd"},
        {"sdpa_causal_bshd_bf16", "sdpa"},
        {"sdpa_sliding_window_bottom_right", "sdpa"},
        {"sdpa_backward_causal", "sdpa_bwd"},
        {"convolution_fwd", "conv2d"},
        {"convolution_fwd_pad_stride", "conv2d"},
        {"convolution_grouped", "conv2d"},
        {"matmul_4x8x5", "matmul"},
        {"pointwise_add_bcast", "add"},
        {"reduction_add_last", "reduction"},
    };
    for (size_t i = 0; i < sizeof bound / sizeof bound[0]; i++) {
        nmo_graph g;
        nmo_err e;
        cr_assert_eq(read_fixture(&g, bound[i][0], &e), NMO_OK, "%s: %s", bound[i][0], e.msg);
        cr_expect_str_eq(g.op->name, bound[i][1], "%s", bound[i][0]);
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/hipdnn/graphs", getenv("NMO_SRC"));
    DIR *d = opendir(dir);
    cr_assert(d != NULL, "%s", dir);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(l - 5), de->d_name);
        nmo_graph g;
        nmo_err e;
        nmo_status st = read_fixture(&g, name, &e);
        cr_expect(st == NMO_OK || (st == NMO_ERR_UNKNOWN_OP && strstr(e.msg, "unsupported operation")), "%s: %s", name,
                  e.msg);
        n++;
    }
    closedir(d);
    cr_expect_geq(n, 29, "fixtures read: %d", n);
}

/* The backward nodes and convolution carry their parameters and statistics. */
Test(hipdnn, backward_nodes_and_convolution_bind)
{
    nmo_graph g;
    nmo_err e;
    cr_assert_eq(read_fixture(&g, "layernorm_backward", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(g.t[g.in_t[4]].uid, 5, "inv_variance is rstd");
    cr_expect_eq(g.t[g.out_t[1]].uid, 8, "dscale is dw");
    cr_expect_eq(param(&g, "eps"), 1e-5);
    cr_assert_eq(read_fixture(&g, "rmsnorm_backward", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(g.t[g.in_t[3]].uid, 4, "inv_rms is rstd");
    cr_assert_eq(read_fixture(&g, "sdpa_backward_causal", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(g.t[g.in_t[4]].uid, 5, "do is dO");
    cr_expect_eq(g.t[g.in_t[5]].uid, 6, "stats is lse");
    cr_expect_eq(param(&g, "causal"), 1);
    cr_assert_eq(read_fixture(&g, "batchnorm_variance_ext", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "eps"), 1e-3, "VarianceExt's epsilon tensor");
    cr_expect_eq(g.t[g.in_t[2]].uid, 3, "variance is running_var");
    /* hipDNN's mixed types: float statistics, scale and bias under a bfloat16 x */
    cr_assert_eq(read_fixture(&g, "batchnorm_mixed_dtype", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "stats_fp32"), 1);
    cr_assert_eq(read_fixture(&g, "batchnorm_reference_data_form", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "stats_fp32"), 0);
    cr_assert_eq(read_fixture(&g, "convolution_fwd_pad_stride", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "padding"), 1);
    cr_expect_eq(param(&g, "stride"), 2);
    cr_expect_eq(param(&g, "dilation"), 1);
    cr_assert_eq(g.shape_n, 7);
    int64_t want[7] = {2, 3, 7, 7, 4, 3, 3};
    for (int k = 0; k < 7; k++) cr_expect_eq(g.shape[k], want[k], "shape[%d]", k);
}

Test(hipdnn, sdpa_bhsd_dims_over_a_bshd_layout)
{
    nmo_graph g;
    nmo_err e;
    cr_assert_eq(read_fixture(&g, "sdpa_causal_bshd_bf16", &e), NMO_OK, "%s", e.msg);
    cr_expect_str_eq(g.op->name, "sdpa");
    cr_expect_eq(param(&g, "causal"), 1);
    cr_expect_eq(param(&g, "scale"), 0, "attn_scale_value null: the default 1/sqrt(D)");
    cr_assert_eq(g.shape_n, 5);
    int64_t want[5] = {1, 2, 2, 12, 16};
    for (int k = 0; k < 5; k++) cr_expect_eq(g.shape[k], want[k], "shape[%d]", k);
    cr_expect_eq(g.t[g.in_t[0]].strides[1], 16, "the head stride of BSHD storage");
}

Test(hipdnn, unmodelled_forms_are_unsupported_operations)
{
    static const char *const cases[][2] = {
        {"layernorm_training_stats", "mean_tensor_uid"},
        {"rmsnorm_channel_bias", "inv_rms_tensor_uid"}, /* training statistics (the bias itself binds) */
        {"sdpa_attn_mask", "attn_mask_tensor_uid"},
        {"sdpa_causal_flag_and_left_bound", "causal flag and left_bound/right_bound together"},
        {"pointwise_add_full", "two full tensors"},
        {"pointwise_relu", "relu_fwd"},
        {"reduction_mul", "mode MUL"},
        {"batchnorm_variance_ext_mixed", "running_mean in FLOAT under x in HALF"},
        {"rmsnorm_backward_dbias", "dbias_tensor_uid"},
        {"layernorm_backward_no_stats", "mean_tensor_uid is null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nmo_graph g;
        nmo_err e;
        cr_expect_eq(read_fixture(&g, cases[i][0], &e), NMO_ERR_UNKNOWN_OP, "%s", cases[i][0]);
        cr_expect(strstr(e.msg, "unsupported operation") && strstr(e.msg, cases[i][1]), "%s: %s", cases[i][0], e.msg);
    }
}

/* Written in hipDNN's vocabulary where its form carries the operator exactly, and read
 * back with the same parameters; rms_norm with a Gemma offset has no hipDNN form. */
Test(hipdnn, written_as_hipdnn_writes_it)
{
    static const struct {
        const char *op, *shape, *type;
        double p0;
    } cases[] = {
        {"layer_norm", "4x16", "LayernormAttributes", 0.125},
        {"rms_norm", "3x8", "RMSNormAttributes", 0.0625},
        {"rms_norm_bias", "3x8", "RMSNormAttributes", 0.0625},
        {"reduction", "3x8", "ReductionAttributes", 2},
        {"sdpa", "1x2x1x4x8", "SdpaAttributes", 0},
        {"matmul", "4x5x6", "MatmulAttributes", NAN},
        {"add", "3x8", "PointwiseAttributes", NAN},
        {"batchnorm_invvar_inference", "2x3x4x5", "BatchnormInferenceAttributes", NAN},
        {"layer_norm_bwd", "4x16", "LayernormBackwardAttributes", 0.125},
        {"rms_norm_bwd", "3x8", "RMSNormBackwardAttributes", 0.0625},
        {"sdpa_bwd", "1x2x1x4x8", "SdpaBackwardAttributes", 0},
        {"conv2d", "1x2x7x7x3x3x3", "ConvolutionFwdAttributes", 2},
        {"batchnorm_inference", "2x3x4x5", "BatchnormInferenceAttributesVarianceExt", 1e-3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const nmo_op *op = nmo_op_find(cases[i].op);
        nmo_case c;
        nmo_plan p;
        nmo_err e;
        int64_t sh[NMO_MAX_DIMS];
        int ns;
        nmo_plan_default(&p, NMO_FP32);
        cr_assert_eq(nmo_shape_parse(&ns, sh, cases[i].shape, &e), NMO_OK);
        cr_assert_eq(nmo_case_init(&c, op, &p, ns, sh, &e), NMO_OK, "%s: %s", op->name, e.msg);
        if (!isnan(cases[i].p0)) c.param[0] = cases[i].p0;
        nmo_graph g, h;
        cr_assert_eq(nmo_graph_from_case(&g, &c, "w", NMO_LAYOUT_ROWMAJOR, &e), NMO_OK, "%s", e.msg);
        cJSON *j = nmo_graph_to_json(&g);
        const cJSON *n = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0);
        cr_expect_str_eq(cJSON_GetObjectItem(n, "type")->valuestring, cases[i].type);
        cr_assert_eq(nmo_graph_parse(&h, j, "w.json", &e), NMO_OK, "%s: %s", op->name, e.msg);
        cr_expect_eq(h.op, op);
        for (int k = 0; k < op->n_param; k++)
            cr_expect_eq(h.param[k], c.param[k], "%s: %s", op->name, op->param[k].name);
        cJSON_Delete(j);
        if (strcmp(op->name, "conv2d") == 0) {
            /* groups: carried by the filter's channel dim C/G (here 1x2x7x7x3x3x3 would not
             * divide; the grouped case is 1x4x7x7x2x3x3 with G = 2) */
            nmo_case cg;
            int64_t gs[7] = {1, 4, 7, 7, 2, 3, 3};
            double gp[5] = {1, 1, 1, 0, 2};
            int gset[5] = {0, 0, 0, 0, 1};
            cr_assert_eq(nmo_case_init_params(&cg, op, &p, 7, gs, gp, gset, &e), NMO_OK, "%s", e.msg);
            cr_assert_eq(nmo_graph_from_case(&g, &cg, "w", NMO_LAYOUT_ROWMAJOR, &e), NMO_OK, "%s", e.msg);
            j = nmo_graph_to_json(&g);
            n = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0);
            cr_expect_str_eq(cJSON_GetObjectItem(n, "type")->valuestring, "ConvolutionFwdAttributes");
            cr_assert_eq(nmo_graph_parse(&h, j, "w.json", &e), NMO_OK, "%s", e.msg);
            for (int k = 0; k < op->n_param; k++) cr_expect_eq(h.param[k], cg.param[k], "conv groups: %s", op->param[k].name);
            cJSON_Delete(j);
            nmo_case_free(&cg);
        }
        if (strcmp(op->name, "sdpa") == 0) {
            c.param[2] = 2; /* left_bound: the band, written as left_bound 2, right_bound 0 */
            cr_assert_eq(nmo_graph_from_case(&g, &c, "w", NMO_LAYOUT_ROWMAJOR, &e), NMO_OK);
            j = nmo_graph_to_json(&g);
            n = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0);
            cr_expect_str_eq(cJSON_GetObjectItem(n, "type")->valuestring, "SdpaAttributes");
            cr_assert_eq(nmo_graph_parse(&h, j, "w.json", &e), NMO_OK, "%s", e.msg);
            for (int k = 0; k < op->n_param; k++) cr_expect_eq(h.param[k], c.param[k], "sdpa band: %s", op->param[k].name);
            cJSON_Delete(j);
        }
        if (strcmp(op->name, "rms_norm") == 0) {
            c.param[1] = 1; /* offset: not in hipDNN's RMSNorm */
            cr_assert_eq(nmo_graph_from_case(&g, &c, "w", NMO_LAYOUT_ROWMAJOR, &e), NMO_OK);
            j = nmo_graph_to_json(&g);
            n = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0);
            cr_expect_str_eq(cJSON_GetObjectItem(n, "type")->valuestring, "RmsNormFwdAttributes");
            cr_assert_eq(nmo_graph_parse(&h, j, "w.json", &e), NMO_OK, "%s", e.msg);
            cr_expect_eq(h.param[1], 1);
            cJSON_Delete(j);
        }
        nmo_case_free(&c);
    }
}

Test(hipdnn, attributes_decide_semantics)
{
    /* a causal mask bottom-right with S_q = S_kv is top-left; an attn_scale_value is the scale */
    const char *txt =
        "{\"io_data_type\": \"float\", \"tensors\": ["
        "{\"uid\": 1, \"dims\": [1, 1, 4, 8], \"data_type\": \"float\"},"
        "{\"uid\": 2, \"dims\": [1, 1, 4, 8], \"data_type\": \"float\"},"
        "{\"uid\": 3, \"dims\": [1, 1, 4, 8], \"data_type\": \"float\"},"
        "{\"uid\": 4, \"dims\": [1, 1, 4, 8], \"data_type\": \"float\"}],"
        "\"nodes\": [{\"name\": \"s\", \"type\": \"SdpaAttributes\", \"inputs\": {\"q_tensor_uid\": 1,"
        " \"k_tensor_uid\": 2, \"v_tensor_uid\": 3, \"attn_mask_tensor_uid\": null}, \"outputs\": {\"o_tensor_uid\": 4},"
        " \"attributes\": {\"causal_mask\": false, \"causal_mask_bottom_right\": true, \"attn_scale_value\": 0.5,"
        " \"dropout_probability\": null}}]}";
    cJSON *j = cJSON_Parse(txt);
    nmo_graph g;
    nmo_err e;
    cr_assert_eq(nmo_graph_parse(&g, j, "g.json", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "causal"), 1);
    cr_expect_eq(param(&g, "scale"), 0.5);
    cJSON_Delete(j);
    /* hipDNN's diagonal band: right_bound 0 is causal, left_bound the window */
    cr_assert_eq(read_fixture(&g, "sdpa_sliding_window_bottom_right", &e), NMO_OK, "%s", e.msg);
    cr_expect_eq(param(&g, "causal"), 1);
    cr_expect_eq(param(&g, "left_bound"), 3);
    cr_expect_eq(param(&g, "right_bound"), -1);
    /* a band on SDPA backward (sdpa_bwd models causal only) is unsupported, not ignored */
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/hipdnn/graphs/sdpa_backward_causal.json", getenv("NMO_SRC"));
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "%s", path);
    static char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    j = cJSON_Parse(buf);
    cr_assert_eq(nmo_graph_parse(&g, j, "b.json", &e), NMO_OK, "%s", e.msg);
    cJSON *at0 = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0), "attributes");
    cJSON_DeleteItemFromObject(at0, "left_bound");
    cJSON_AddItemToObject(at0, "left_bound", cJSON_CreateNumber(2));
    cJSON_ReplaceItemInObject(at0, "causal_mask", cJSON_CreateFalse());
    cr_expect_eq(nmo_graph_parse(&g, j, "b.json", &e), NMO_ERR_UNKNOWN_OP, "%s", e.msg);
    cr_expect(strstr(e.msg, "sliding window") != NULL, "%s", e.msg);
    cJSON_Delete(j);
    /* dropout is not modelled */
    j = cJSON_Parse(txt);
    cJSON *at = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"), 0), "attributes");
    cJSON_ReplaceItemInObject(at, "dropout_probability", cJSON_CreateNumber(0.1));
    cr_expect_eq(nmo_graph_parse(&g, j, "g.json", &e), NMO_ERR_UNKNOWN_OP);
    cr_expect(strstr(e.msg, "dropout") != NULL, "%s", e.msg);
    cJSON_Delete(j);
}
