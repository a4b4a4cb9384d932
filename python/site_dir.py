"""Print where `meson install` puts the numoracle package for this python3 and prefix.

Debian's python3 puts /usr/local/lib/python3.X/dist-packages (prefix /usr/local) and
/usr/lib/python3/dist-packages (prefix /usr) on sys.path, which meson's python module
(1.0) does not know: for prefix /usr/local it answers lib/python3/dist-packages, a folder
this python never reads. So: the first site folder on sys.path under the prefix; else the
standard scheme's purelib for the prefix (the user then adds it to PYTHONPATH)."""
import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
for p in sys.path:
    if p.startswith(prefix + os.sep) and os.path.basename(p) in ("dist-packages", "site-packages"):
        print(p)
        break
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
