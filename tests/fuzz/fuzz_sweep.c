/* Fuzz the sweep loader: input = sweep.json [NUL graph.template.json]; without a NUL the
 * template is the shipped RmsNormFwd/Rows one (embedded below). Every case loads or
 * carries an error; golden directories never leave the sweep folder. */
#include "fuzz_common.h"
#include "numoracle/bundle.h"

static const char tmpl[] =
    "{\"name\":\"rms_norm_rows\",\"compute_data_type\":\"FLOAT\",\"intermediate_data_type\":\"FLOAT\""
    ",\"io_data_type\":\"${case.io_data_type}\",\"tensors\":[{\"uid\":0,\"name\":\"x\",\"data_type\":\"$"
    "{case.tensors.data_type}\",\"dims\":\"${case.tensors.dims}\",\"strides\":\"${case.tensors.st"
    "rides}\",\"virtual\":false},{\"uid\":1,\"name\":\"w\",\"data_type\":\"${case.tensors.data_type}\""
    ",\"dims\":\"${case.tensors.dims}\",\"strides\":\"${case.tensors.strides}\",\"virtual\":false},"
    "{\"uid\":2,\"name\":\"y\",\"data_type\":\"${case.tensors.data_type}\",\"dims\":\"${case.tensors.d"
    "ims}\",\"strides\":\"${case.tensors.strides}\",\"virtual\":false}],\"nodes\":[{\"name\":\"rms_no"
    "rm\",\"type\":\"RmsNormFwdAttributes\",\"compute_data_type\":\"FLOAT\",\"attributes\":{\"x_tenso"
    "r_uid\":0,\"w_tensor_uid\":1,\"y_tensor_uid\":2,\"eps\":\"${case.attributes.eps}\"}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[512], sp[600], tp[600];
    snprintf(dir, sizeof dir, "%s/RmsNormFwd", fuzz_dir());
    mkdir(dir, 0777);
    snprintf(dir, sizeof dir, "%s/RmsNormFwd/Rows", fuzz_dir());
    mkdir(dir, 0777);
    snprintf(sp, sizeof sp, "%s/sweep.json", dir);
    snprintf(tp, sizeof tp, "%s/graph.template.json", dir);
    size_t la, lb;
    const uint8_t *b;
    int has_b;
    fuzz_split(data, size, &la, &b, &lb, &has_b);
    fuzz_write(sp, data, la);
    if (has_b) fuzz_write(tp, b, lb);
    else fuzz_write(tp, tmpl, sizeof tmpl - 1);
    nmo_sweep s;
    nmo_err e;
    e.msg[0] = '\0';
    if (nmo_sweep_load(&s, dir, NULL, NULL, &e) != NMO_OK) {
        if (!e.msg[0]) abort();
        return 0;
    }
    size_t dl = strlen(dir);
    for (int i = 0; i < s.n_cases; i++) {
        const nmo_sweep_case *sc = &s.cases[i];
        if (sc->error[0] || sc->golden_null) continue;
        /* an accepted case directory lies strictly inside the sweep folder */
        if (strncmp(sc->golden_dir, dir, dl) != 0 || sc->golden_dir[dl] != '/') abort();
        nmo_bundle bu;
        if (nmo_sweep_case_load(&bu, &s, i, NMO_BL_GRAPH_ONLY, &e) == NMO_OK) nmo_bundle_free(&bu);
    }
    nmo_sweep_free(&s);
    return 0;
}
