"""Mutation engine for Triton kernels written in Python (numoracle campaign, issue 19).

Edits only the bodies of ``@triton.jit`` functions, located with Python's ``ast``; an edit
is a replacement of a byte range of the source text (so comments, layout and everything
outside the kernels stay as written). Pure Python: no Triton, PyTorch or NumPy needed,
so it is unit-tested on source text (test_tmut.py).

Mutation operators, named as the C engine's (apps/campaign/README.md) where they match:

  aor    + - * / (and += -= *= /=) replaced by their inverse
  ror    < <= > >= == != swapped (< -> <= and >, ...)
  lb     boundary conditions of masks: `offs < n` -> `offs < n - 1`, `offs < n + 1`
  cp     numeric literals x0.5 / x2 (0 -> 1), integers +-1; eps arguments x10 / x0.1
  cast   `.to(tl.float32)` / `.cast(tl.float32)` removed, or narrowed to tl.bfloat16 /
         tl.float16; `.cast(other.dtype)` removed; `dtype=tl.float32` narrowed the same way
  red    tl.max <-> tl.sum (tl.min -> tl.max), and the reduction axis changed (0 <-> 1)
  mask   `mask=` of tl.load / tl.store dropped; `other=` of tl.load changed (-inf -> 0, 0 -> 1)
  idx    pointer offset of tl.load / tl.store shifted by +-1 element
  sdl    statement deletion (an assignment, augmented assignment or call statement -> pass)
  term   one operand of a + / - dropped (an eps, a max subtraction, a term of a sum)

Behaviour-preserving variants (opt-in, not in MUTATION_OPERATORS; ids ``B-<op>-...``):

  bp     the operands of a + or * commuted (a + b -> b + a): IEEE addition and
         multiplication commute, so every check must still PASS them (a FAIL is a false
         alarm); pointer arithmetic is left alone

A mutant's id is ``G-<op>-<8 hex digits>``: the low 32 bits of the FNV-1a hash of the
edit (operator name, file, byte offset and length of the range, mutation operator and
replacement text), as in the C engine, so a per-operator cap ("the N smallest ids") is a
fixed pseudo-random sample that depends only on the source.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

MUTATION_OPERATORS = ("aor", "ror", "lb", "cp", "cast", "red", "mask", "idx", "sdl", "term")


@dataclass
class Edit:
    start: int          # character offset into the source (inclusive)
    end: int            # exclusive
    repl: str
    mop: str
    func: str
    line: int
    col: int
    desc: str


@dataclass
class Mutant:
    id: str
    op: str
    file: str
    mop: str
    func: str
    line: int
    col: int
    desc: str
    diff: str
    source: str = field(repr=False)


def fnv1a32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def mutant_id(op: str, file: str, e: Edit) -> str:
    key = f"{op}|{file}|{e.start}|{e.end - e.start}|{e.mop}|{e.repl}".encode()
    return f"{'B' if e.mop == 'bp' else 'G'}-{op}-{fnv1a32(key):08x}"


# ---- locating the kernels ---------------------------------------------------------------

def _is_triton_jit(dec: ast.expr) -> bool:
    """@triton.jit, @triton.jit(...), @jit (from triton import jit), @tl.core... not."""
    node = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(node, ast.Attribute):
        return node.attr == "jit" and isinstance(node.value, ast.Name) and node.value.id == "triton"
    if isinstance(node, ast.Name):
        return node.id == "jit"
    return False


def jit_functions(src: str) -> List[ast.FunctionDef]:
    """The @triton.jit functions of a module (top level and nested), in source order."""
    tree = ast.parse(src)
    out = [n for n in ast.walk(tree)
           if isinstance(n, ast.FunctionDef) and any(_is_triton_jit(d) for d in n.decorator_list)]
    return sorted(out, key=lambda n: n.lineno)


class _Text:
    """ast positions (1-based line, UTF-8 byte column) <-> character offsets."""

    def __init__(self, src: str):
        self.src = src
        self.lines = src.splitlines(keepends=True)
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))

    def off(self, line: int, col_bytes: int) -> int:
        text = self.lines[line - 1]
        return self.starts[line - 1] + len(text.encode()[:col_bytes].decode(errors="replace"))

    def span(self, n: ast.AST) -> Tuple[int, int]:
        return self.off(n.lineno, n.col_offset), self.off(n.end_lineno, n.end_col_offset)

    def seg(self, n: ast.AST) -> str:
        s, e = self.span(n)
        return self.src[s:e]


def _body(fn: ast.FunctionDef) -> List[ast.stmt]:
    """The statements of a kernel without its docstring."""
    b = fn.body
    if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) and isinstance(b[0].value.value, str):
        b = b[1:]
    return b


def _dotted(n: ast.AST) -> str:
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        return _dotted(n.value) + "." + n.attr
    return ""


_BIN_SYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_BIN_INV = {ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*"}
_CMP_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_CMP_SWAP = {ast.Lt: ["<=", ">"], ast.LtE: ["<", ">="], ast.Gt: [">=", "<"], ast.GtE: [">", "<="],
             ast.Eq: ["!="], ast.NotEq: ["=="]}
_NARROW = ("tl.bfloat16", "tl.float16")


def _find_op(src: str, a: int, b: int, sym: str) -> Optional[int]:
    """Offset of operator symbol sym between a and b (the gap between two operands),
    skipping parentheses and comments."""
    i = a
    while i < b:
        c = src[i]
        if c == "#":
            while i < b and src[i] != "\n":
                i += 1
            continue
        if src.startswith(sym, i):
            nxt = src[i + len(sym)] if i + len(sym) < len(src) else ""
            # '<' must not be the start of '<=' when sym is '<', '*' not of '**', '/' not '//'
            if sym in ("<", ">", "=", "!") and nxt == "=":
                i += 2
                continue
            if sym in ("*", "/") and nxt == sym:
                i += 2
                continue
            return i
        i += 1
    return None


def _fmt_num(v) -> str:
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        return str(v)
    r = repr(float(v))
    return r if ("e" in r or "." in r or "inf" in r or "nan" in r) else r + ".0"


class _Gen:
    def __init__(self, src: str, fn: ast.FunctionDef, mops: Sequence[str]):
        self.t = _Text(src)
        self.src = src
        self.fn = fn
        self.mops = set(mops)
        self.edits: List[Edit] = []
        self.params = {a.arg for a in fn.args.args}

    def add(self, s: int, e: int, repl: str, mop: str, node: ast.AST, desc: str):
        if mop not in self.mops or self.src[s:e] == repl:
            return
        self.edits.append(Edit(s, e, repl, mop, self.fn.name, node.lineno, node.col_offset + 1, desc))

    # -- node visitors -------------------------------------------------------------------
    def binop(self, n: ast.BinOp):
        k = type(n.op)
        if k not in _BIN_SYM:
            return
        _, le = self.t.span(n.left)
        rs, _ = self.t.span(n.right)
        at = _find_op(self.src, le, rs, _BIN_SYM[k])
        if at is not None:
            self.add(at, at + 1, _BIN_INV[k], "aor", n, f"'{_BIN_SYM[k]}' -> '{_BIN_INV[k]}'")
        if k in (ast.Add, ast.Mult):
            s, e = self.t.span(n)
            left, right = self.t.seg(n.left), self.t.seg(n.right)
            if "ptr" not in (left + right).lower():
                sym = _BIN_SYM[k]
                self.add(s, e, f"(({right}) {sym} ({left}))", "bp", n, f"commute '{sym}': {left} {sym} {right}")
        if k in (ast.Add, ast.Sub):
            s, e = self.t.span(n)
            left, right = self.t.seg(n.left), self.t.seg(n.right)
            self.add(s, e, "(" + left + ")", "term", n, f"drop the right operand of '{_BIN_SYM[k]}': {right}")
            if k is ast.Add:
                self.add(s, e, "(" + right + ")", "term", n, f"drop the left operand of '+': {left}")

    def augassign(self, n: ast.AugAssign):
        k = type(n.op)
        if k not in _BIN_SYM:
            return
        _, te = self.t.span(n.target)
        vs, _ = self.t.span(n.value)
        at = _find_op(self.src, te, vs, _BIN_SYM[k] + "=")
        if at is not None:
            self.add(at, at + 2, _BIN_INV[k] + "=", "aor", n, f"'{_BIN_SYM[k]}=' -> '{_BIN_INV[k]}='")

    def compare(self, n: ast.Compare):
        prev = n.left
        for op, right in zip(n.ops, n.comparators):
            k = type(op)
            if k in _CMP_SYM:
                _, pe = self.t.span(prev)
                rs, re_ = self.t.span(right)
                at = _find_op(self.src, pe, rs, _CMP_SYM[k])
                if at is not None:
                    sym = _CMP_SYM[k]
                    for rep in _CMP_SWAP[k]:
                        self.add(at, at + len(sym), rep, "ror", n, f"'{sym}' -> '{rep}'")
                if k in (ast.Lt, ast.LtE, ast.Gt, ast.GtE):
                    rtxt = self.t.seg(right)
                    for d in ("- 1", "+ 1"):
                        self.add(rs, re_, f"({rtxt}) {d}", "lb", n, f"bound {rtxt} -> ({rtxt}) {d}")
            prev = right

    def constant(self, n: ast.Constant, parent: Optional[ast.AST]):
        v = n.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return
        if isinstance(parent, ast.keyword) and parent.arg in ("axis", "num_warps", "num_stages"):
            return  # axis has its own operator (red); launch settings are not arithmetic
        s, e = self.t.span(n)
        if isinstance(v, int):
            for w in (v + 1, v - 1):
                if w >= 0 or v < 0:
                    self.add(s, e, _fmt_num(w), "cp", n, f"{v} -> {w}")
        else:
            for w in ((1.0,) if v == 0 else (v * 0.5, v * 2.0)):
                self.add(s, e, _fmt_num(w), "cp", n, f"{_fmt_num(v)} -> {_fmt_num(w)}")

    def name(self, n: ast.Name):
        # eps: a kernel argument (the module-level value is not kernel code)
        if "eps" in n.id.lower() and isinstance(n.ctx, ast.Load):
            s, e = self.t.span(n)
            for f in ("10.0", "0.1"):
                self.add(s, e, f"({n.id} * {f})", "cp", n, f"{n.id} -> {n.id} * {f}")

    def call(self, n: ast.Call):
        f = _dotted(n.func)
        s, e = self.t.span(n)
        # casts: x.to(tl.float32)
        if isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "cast") and n.args:
            tgt = _dotted(n.args[0])
            how = n.func.attr
            if tgt == "tl.float32":
                self.add(s, e, "(" + self.t.seg(n.func.value) + ")", "cast", n, f"drop .{how}(tl.float32)")
                a_s, a_e = self.t.span(n.args[0])
                for nar in _NARROW:
                    self.add(a_s, a_e, nar, "cast", n, f".{how}(tl.float32) -> .{how}({nar})")
            elif how == "cast":
                # x.cast(y.dtype): Liger's cast to the other operand's dtype (silu(a).cast(b.dtype))
                self.add(s, e, "(" + self.t.seg(n.func.value) + ")", "cast", n, f"drop .cast({self.t.seg(n.args[0])})")
        for kw in n.keywords:
            if kw.arg == "dtype" and _dotted(kw.value) == "tl.float32":
                a_s, a_e = self.t.span(kw.value)
                for nar in _NARROW:
                    self.add(a_s, a_e, nar, "cast", n, f"dtype=tl.float32 -> {nar}")
        # reductions
        red = {"tl.max": ["tl.sum"], "tl.sum": ["tl.max"], "tl.min": ["tl.max"]}
        if f in red:
            fs, fe = self.t.span(n.func)
            for r in red[f]:
                self.add(fs, fe, r, "red", n, f"{f} -> {r}")
            for kw in n.keywords:
                if kw.arg == "axis" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int):
                    a_s, a_e = self.t.span(kw.value)
                    w = 1 - kw.value.value if kw.value.value in (0, 1) else 0
                    self.add(a_s, a_e, str(w), "red", n, f"{f} axis={kw.value.value} -> axis={w}")
        # loads and stores: masks, other, offsets
        if f in ("tl.load", "tl.store") and n.args:
            p = n.args[0]
            ps, pe = self.t.span(p)
            ptxt = self.t.seg(p)
            for d in ("+ 1", "- 1"):
                self.add(ps, pe, f"({ptxt}) {d}", "idx", n, f"{f} offset ({ptxt}) {d}")
            for i, kw in enumerate(n.keywords):
                if kw.arg == "mask":
                    # drop ", mask=..." : from the end of the previous argument to the end of the value
                    prev = n.args[-1] if i == 0 else n.keywords[i - 1].value
                    _, prev_e = self.t.span(prev)
                    _, ve = self.t.span(kw.value)
                    self.add(prev_e, ve, "", "mask", n, f"{f} without mask ({self.t.seg(kw.value)})")
                if kw.arg == "other" and f == "tl.load":
                    vs, ve = self.t.span(kw.value)
                    vt = self.t.seg(kw.value)
                    rep = "0.0" if "inf" in vt else "1.0"
                    self.add(vs, ve, rep, "mask", n, f"tl.load other={vt} -> {rep}")

    def stmt(self, st: ast.stmt):
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or (
                isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
            s, e = self.t.span(st)
            self.add(s, e, "pass", "sdl", st, "delete: " + " ".join(self.t.seg(st).split())[:120])

    def run(self) -> List[Edit]:
        parents: Dict[int, ast.AST] = {}
        for stmt in _body(self.fn):
            for node in ast.walk(stmt):
                for ch in ast.iter_child_nodes(node):
                    parents[id(ch)] = node
        for stmt in _body(self.fn):
            for node in ast.walk(stmt):
                if isinstance(node, ast.BinOp):
                    self.binop(node)
                elif isinstance(node, ast.AugAssign):
                    self.augassign(node)
                elif isinstance(node, ast.Compare):
                    self.compare(node)
                elif isinstance(node, ast.Constant):
                    self.constant(node, parents.get(id(node)))
                elif isinstance(node, ast.Name):
                    self.name(node)
                elif isinstance(node, ast.Call):
                    self.call(node)
                if isinstance(node, ast.stmt):
                    self.stmt(node)
        return self.edits


def _apply(src: str, e: Edit) -> str:
    return src[:e.start] + e.repl + src[e.end:]


def unified_diff(a: str, b: str, path: str) -> str:
    return "".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                        "a/" + path, "b/" + path, n=1))


def generate(src: str, op: str, file: str, functions: Optional[Iterable[str]] = None,
             mops: Sequence[str] = MUTATION_OPERATORS) -> List[Mutant]:
    """Every mutant of the @triton.jit functions of ``src`` (restricted to ``functions``
    when given), sorted by id. Edits whose result does not parse are dropped (they are
    not programs); duplicates (the same resulting text) are kept once."""
    want = set(functions) if functions is not None else None
    fns = [f for f in jit_functions(src) if want is None or f.name in want]
    if want is not None:
        missing = want - {f.name for f in fns}
        if missing:
            raise ValueError(f"{file}: no @triton.jit function named {', '.join(sorted(missing))}")
    seen = set()
    out: List[Mutant] = []
    for fn in fns:
        for e in _Gen(src, fn, mops).run():
            m = _apply(src, e)
            if m in seen:
                continue
            try:
                ast.parse(m)
            except SyntaxError:
                continue
            seen.add(m)
            out.append(Mutant(mutant_id(op, file, e), op, file, e.mop, e.func, e.line, e.col, e.desc,
                              unified_diff(src, m, file), m))
    out.sort(key=lambda x: x.id)
    return out


def sample(muts: List[Mutant], max_per_op: int) -> List[Mutant]:
    """The max_per_op mutants with the smallest ids (0: all)."""
    s = sorted(muts, key=lambda x: x.id)
    return s if max_per_op <= 0 else s[:max_per_op]


def null_mutant(src: str, op: str, file: str) -> Mutant:
    """The unmutated source, run exactly like a mutant: must never be effective."""
    return Mutant(f"N-{op}", op, file, "null", "", 0, 0, "null control (unmutated source)", "", src)
