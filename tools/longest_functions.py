#!/usr/bin/env python3
"""List C function definitions by length (lines from the opening line to the closing brace).

    python3 tools/longest_functions.py [-n 10] [DIR...]     (default: oracle refs hip apps)

A definition is a line at column 0 that is not a preprocessor line, a comment or a
declaration, followed (possibly over several lines) by a '{' at the end of the signature;
the body ends at the first '}' in column 0. This matches the project's style (K&R, body
braces of functions in column 0) and is meant for reports, not for parsing arbitrary C.
"""
import os, re, sys

def functions(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line and not line[0].isspace() and line[0] not in '#/*}{' and '(' in line \
                and not line.rstrip().endswith(';') and not line.startswith(('typedef', 'struct', 'enum', 'union', 'static const', 'const')):
            # collect the signature up to the opening brace
            j = i
            sig = line
            while j < n and '{' not in lines[j] and not lines[j].rstrip().endswith(';'):
                j += 1
                if j < n:
                    sig += ' ' + lines[j].strip()
            if j < n and '{' in lines[j] and not lines[j].rstrip().endswith(';'):
                k = j + 1
                while k < n and not lines[k].startswith('}'):
                    k += 1
                m = re.search(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(', sig)
                if m and k < n:
                    yield m.group(1), i + 1, k - i + 1
                i = k + 1
                continue
        i += 1

def main(argv):
    top, dirs = 10, []
    it = iter(argv)
    for a in it:
        if a == '-n':
            top = int(next(it))
        else:
            dirs.append(a)
    dirs = dirs or [d for d in ('oracle', 'refs', 'hip', 'apps') if os.path.isdir(d)]
    rows = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for fn in files:
                if fn.endswith(('.c', '.h', '.hip')):
                    p = os.path.join(root, fn)
                    rows += [(ln, name, p, start) for name, start, ln in functions(p)]
    rows.sort(key=lambda r: (-r[0], r[2], r[3]))
    for ln, name, p, start in rows[:top]:
        print(f'{ln:5d}  {name}  {p}:{start}')

if __name__ == '__main__':
    main(sys.argv[1:])
