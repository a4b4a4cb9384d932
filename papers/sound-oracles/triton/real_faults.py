#!/usr/bin/env python3
"""Rebuild the real faults of real_faults.json at the subject's commit: the version of each
file before its numerical fix, written to subjects/faults/<id>/<file> (git-ignored, like the
subjects). A fault that no longer applies is reported and skipped, never approximated.

    python3 real_faults.py LIGER_GIT_DIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    git = argv[1]
    spec = json.load(open(os.path.join(HERE, "real_faults.json")))
    sub = os.path.join(ROOT, "subjects", spec["subject"])
    bad = 0
    for f in spec["faults"]:
        src = open(os.path.join(sub, f["file"])).read()
        if f["how"] == "reverse":
            diff = subprocess.run(["git", "--git-dir", git, "show", "--format=", f["commit"], "--",
                                   "src/" + f["file"]], check=True, capture_output=True, text=True).stdout
            diff = diff.replace("a/src/", "a/").replace("b/src/", "b/")
            d = os.path.join(ROOT, "subjects", "faults", f["id"])
            os.makedirs(os.path.dirname(os.path.join(d, f["file"])), exist_ok=True)
            with open(os.path.join(d, f["file"]), "w") as o:
                o.write(src)
            # patch(1), not git apply: inside the checkout git apply resolves paths from its top
            r = subprocess.run(["patch", "-R", "-p1", "--no-backup-if-mismatch", "-s"], input=diff,
                               cwd=d, text=True, capture_output=True)
            if r.returncode != 0:
                print(f"{f['id']}: the reverse of {f['commit']} does not apply: {r.stderr.strip()[:200]}")
                bad += 1
                continue
            out = open(os.path.join(d, f["file"])).read()
        else:
            n = src.count(f["old"])
            if n == 0:
                print(f"{f['id']}: the fixed code is not in the subject any more: skipped")
                bad += 1
                continue
            out = src.replace(f["old"], f["new"])
            d = os.path.join(ROOT, "subjects", "faults", f["id"])
            os.makedirs(os.path.dirname(os.path.join(d, f["file"])), exist_ok=True)
            with open(os.path.join(d, f["file"]), "w") as o:
                o.write(out)
        import difflib
        nchg = sum(1 for ln in difflib.unified_diff(src.splitlines(), out.splitlines(), lineterm="", n=0)
                   if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
        print(f"{f['id']}: {f['file']} before {f['commit'][:8]} ({nchg} lines differ from the subject)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
