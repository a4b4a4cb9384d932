#!/usr/bin/python3
"""A reader of a golden bundle that knows only hipDNN's published field names (the graph
JSON hipDNN serializes and RFC 0011's bundle files), not numoracle's: it checks that a
bundle numoracle wrote is one hipDNN's loader can take.

    usage: hipdnn_reader.py BUNDLE.json

Graph: "name", "io_data_type", "compute_data_type", "intermediate_data_type",
"tensors" [{uid, name, dims, strides, data_type, virtual}], "nodes" [{name, type,
compute_data_type, inputs {<x>_tensor_uid}, outputs {<y>_tensor_uid}, attributes}].
Files: BASE.tensor{uid}.bin per non-virtual tensor without a "value", (max offset + 1) * element size
bytes; BASE.meta.json with RFC 0011's fields. Prints one line per node and "OK"; exit 1
with the reason on the first violation."""
import json
import os
import sys

# hipDNN's serialized data-type names and their element sizes
DTYPES = {"float": 4, "half": 2, "bfloat16": 2, "double": 8, "int32": 4, "int64": 8,
          "uint8": 1, "int8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}
META_FIELDS = ["format_version", "generator", "generator_version", "generated_at",
               "reference_source", "reference_strategy", "seed", "operation", "tolerance"]


def fail(msg):
    print("hipdnn_reader: " + msg)
    sys.exit(1)


def main(path):
    with open(path) as f:
        g = json.load(f)
    for k in ("io_data_type", "compute_data_type", "intermediate_data_type"):
        if g.get(k) not in DTYPES:
            fail("%s: %s is %r, not a hipDNN data type" % (path, k, g.get(k)))
    tensors = {}
    for t in g["tensors"]:
        for k in ("uid", "name", "dims", "strides", "data_type", "virtual"):
            if k not in t:
                fail("%s: tensor lacks %s" % (path, k))
        if t["data_type"] not in DTYPES:
            fail("%s: uid %d: data_type %r" % (path, t["uid"], t["data_type"]))
        if len(t["dims"]) != len(t["strides"]):
            fail("%s: uid %d: dims and strides differ in rank" % (path, t["uid"]))
        tensors[t["uid"]] = t
    if len(g["nodes"]) != 1:
        fail("%s: expected one node" % path)
    n = g["nodes"][0]
    for k in ("name", "type", "inputs", "outputs"):
        if k not in n:
            fail("%s: node lacks %s" % (path, k))
    if not n["type"].endswith("Attributes"):
        fail("%s: node type %r is not an <Op>Attributes name" % (path, n["type"]))
    wired = []
    for sec in ("inputs", "outputs"):
        for k, v in n[sec].items():
            if not k.endswith("_tensor_uid"):
                # hipDNN keeps a few non-tensor fields there (a pointwise "operation")
                if isinstance(v, int) and not isinstance(v, bool):
                    fail("%s: %s key %r holds a uid but is not <name>_tensor_uid" % (path, sec, k))
                continue
            if v is None:
                continue
            if v not in tensors:
                fail("%s: %s.%s = %r is not a tensor" % (path, sec, k, v))
            wired.append(v)
    if sorted(wired) != sorted(u for u, t in tensors.items() if not t["virtual"]):
        fail("%s: the node does not wire every tensor exactly once" % path)
    base = path[:-5] if path.endswith(".json") else path
    for u, t in sorted(tensors.items()):
        if t["virtual"] or "value" in t:  # a value tensor (epsilon) lives in the graph
            continue
        span = 1 + sum((d - 1) * s for d, s in zip(t["dims"], t["strides"]))
        want = span * DTYPES[t["data_type"]]
        f = "%s.tensor%d.bin" % (base, u)
        if not os.path.isfile(f) or os.path.getsize(f) != want:
            fail("%s: expected %d bytes" % (f, want))
    with open(base + ".meta.json") as f:
        m = json.load(f)
    for k in META_FIELDS:
        if k not in m:
            fail("%s.meta.json: lacks %s" % (base, k))
    tol = m["tolerance"]
    if not (isinstance(tol.get("absolute"), (int, float)) and isinstance(tol.get("relative"), (int, float))):
        fail("%s.meta.json: tolerance needs absolute and relative" % base)
    print("%s: %s, %d tensors, inputs %s, outputs %s, operation %s" %
          (os.path.basename(path), n["type"], len(tensors), ",".join(sorted(n["inputs"])),
           ",".join(sorted(n["outputs"])), m["operation"]))
    print("OK")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1])
