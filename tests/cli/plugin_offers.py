#!/usr/bin/python3
"""Check `numoracle run --engine plugin:P --json R` against the plugin's own capability
table (`numoracle candidates --op OP --plugin P`), computed, not pinned: a case PASSes
exactly when a correct kernel of the plugin offers its operator and dtype, every other
case is a capability SKIP, nothing fails, and at least one case ran.

    usage: plugin_offers.py NUMORACLE PLUGIN RUN.json
Prints "plugin_offers: N passed, M capability skips"; exit 1 with the reason otherwise."""
import json
import re
import subprocess
import sys

nmo, plugin, path = sys.argv[1:4]
offers = {}


def offered(op, dt):
    if op not in offers:
        out = subprocess.run([nmo, "candidates", "--op", op, "--plugin", plugin], capture_output=True, text=True).stdout
        s = set()
        for line in out.splitlines():
            m = re.match(r"^\S+ correct dtypes=(\S+) ", line)
            if m:
                s.update(d.split(">")[0] for d in m.group(1).split(","))
        offers[op] = s
    return dt in offers[op]


def operation(op):
    """RFC 0011's Operation of an operator (nmo_op_operation)."""
    base, sfx = op, "Fwd"
    if op.endswith("_bwd"):
        base, sfx = op[:-4], "Bwd"
    elif op.endswith("_inference"):
        base, sfx = op[: -len("_inference")], "FwdInference"
    return "".join(w[:1].upper() + w[1:] for w in base.split("_")) + sfx


ops_out = subprocess.run([nmo, "ops"], capture_output=True, text=True).stdout
by_operation = {operation(m.group(1)): m.group(1) for m in re.finditer(r"^([a-z0-9_]+): ", ops_out, re.M)}

with open(path) as f:
    r = json.load(f)
n_pass = n_skip = 0
for c in r["cases"]:
    op = by_operation[c["name"].split("_")[0]]
    dt = re.search(r"_(fp32|bfp16|bf16|fp16)(\.|_|$)", c["name"]).group(1).replace("bfp16", "bf16")
    want = "PASS" if offered(op, dt) else "SKIP"
    if c["status"] != want:
        sys.exit("plugin_offers: %s (%s %s): %s, expected %s" % (c["name"], op, dt, c["status"], want))
    if want == "SKIP":
        why = c.get("reason", "")
        if not re.search(r"the plugin has no (correct )?kernel (for|of) op ", why):
            sys.exit("plugin_offers: %s: a skip that is not the capability query's: %s" % (c["name"], why))
        n_skip += 1
    else:
        n_pass += 1
s = r["summary"]
if n_pass == 0 or s["failed"] or s["inconclusive"] or s["passed"] != n_pass or s["skipped"] != n_skip:
    sys.exit("plugin_offers: summary %s disagrees with %d passes, %d skips" % (s, n_pass, n_skip))
print("plugin_offers: %d passed, %d capability skips" % (n_pass, n_skip))
