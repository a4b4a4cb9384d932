"""Assertions for test suites (pytest, unittest): like ``torch.testing.assert_close``, but
the tolerance is the certified reachable set of a precision plan, element by element.

    from numoracle.testing import assert_certified

    def test_rms_norm():
        y = my_rms_norm(x, w, eps=1e-6)
        assert_certified(y, op="rms_norm", inputs={"x": x, "w": w}, params={"eps": 1e-6})
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from ._api import Report, Shape, Tensors, _Case, _run_check, _write_case

__all__ = ["assert_certified", "assert_invariant"]


def _g(v: float) -> str:
    """Shortest text that reads back as v."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    for p in range(6, 18):
        s = f"{v:.{p}g}"
        if float(s) == v:
            return s
    return repr(v)


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:.3g}%" if n else "0%"


def _message(rep: Report, case: _Case, repro: Optional[str]) -> str:
    d = rep.to_dict()
    c = d["counts"]
    lines = [f"numoracle: {rep.op} output not certified: {rep.verdict}"]
    if rep.n_fail:
        lines.append(f"  mismatched elements: {rep.n_fail} / {rep.n} ({_pct(rep.n_fail, rep.n)}) outside the "
                     f"certified set R; {rep.n_inconclusive} inconclusive")
    else:
        lines.append(f"  inconclusive elements: {rep.n_inconclusive} / {rep.n} ({_pct(rep.n_inconclusive, rep.n)}); "
                     "none outside R (INCONCLUSIVE is never a pass)")
    ir = d.get("inconclusive_reasons", {})
    if rep.n_inconclusive:
        why = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in ir.items() if v)
        lines.append(f"  inconclusive because: {why or 'see the report'}")
    w = rep.worst
    if w is not None:
        lines.append(f"  worst element: {w.where()} (flat index {w.index}), {w.verdict}")
        lines.append(f"    actual:   {_g(w.candidate)}")
        if math.isnan(w.r_lo):
            lines.append("    R:        {NaN} (every implementation gives NaN)")
        else:
            vals = "" if not (math.isfinite(w.r_lo) and math.isfinite(w.r_hi)) else \
                f" ({w.width_ulps + 1} value{'s' if w.width_ulps else ''} of {rep.dtype})"
            lines.append(f"    R:        [{_g(w.r_lo)}, {_g(w.r_hi)}]{vals}")
        if w.verdict == "FAIL":
            dist = "not representable or NaN" if math.isinf(w.outside_ulps) else \
                f"{w.outside_ulps:.0f} ulp{'' if w.outside_ulps == 1 else 's'} of {d['plan']['out']} outside R"
            lines.append(f"    distance: {dist}")
        elif math.isfinite(w.width_scale_ulps):
            lines.append(f"    width:    {_g(w.width_scale_ulps)} ulps at the error scale {_g(w.scale)} "
                         f"(max_ulps in effect: {rep.max_ulps})")
    lines.append(f"  plan: {rep.plan} (max_ulps in effect: {rep.max_ulps})")
    params = d.get("params", {})
    if params:
        lines.append("  params: " + " ".join(f"{k}={_g(float(v))}" for k, v in params.items()))
    if rep.verdict == "INCONCLUSIVE":
        lines.append("  to decide: state what the kernel does (plan='sum=... fn=... inter=...', a preset), "
                     "check a smaller shape, give max_ulps, or pass allow_inconclusive=True")
    if repro:
        lines.append(f"  reproduce: {repro}")
    return "\n".join(lines)


def assert_certified(actual: Tensors, *, op: str, inputs: Tensors, dtype: Optional[str] = None,
                     plan: Optional[str] = None, params: Optional[Mapping[str, float]] = None,
                     allow_inconclusive: bool = False, max_ulps: Optional[int] = None,
                     engine: str = "auto", shape: Optional[Shape] = None, reproduce: bool = True) -> Report:
    """Assert that ``actual`` (one output array, or a dict / sequence of the op's outputs)
    is what a correct implementation of the plan could produce for ``inputs``.

    Raises ``AssertionError`` on FAIL, and on INCONCLUSIVE unless ``allow_inconclusive``;
    the message gives the verdict, the mismatched elements k / n, the worst element (index,
    actual value, R, distance outside R in ulps), the plan, and a ``numoracle check``
    command that judges the same tensors from the CLI (``reproduce``: the tensors are
    written, on failure only, under ``$NUMORACLE_REPRO_DIR`` or the temporary directory).
    A request numoracle refuses (unknown op, wrong dtype or dims, missing input) raises
    :class:`numoracle.Error`, as :func:`numoracle.check` does. Returns the
    :class:`numoracle.Report` otherwise. Other arguments as :func:`numoracle.check`."""
    case = _Case(op, inputs, actual, dtype, plan, params, max_ulps, engine, shape)
    rep = _run_check(case, False, None)
    if rep.verdict == "PASS" or (rep.verdict == "INCONCLUSIVE" and allow_inconclusive):
        return rep
    repro = None
    if reproduce:
        try:
            repro = _write_case(case, rep.to_dict(), None)
        except OSError as e:  # the assertion matters more than the files
            repro = f"(could not write the tensors: {e})"
    raise AssertionError(_message(rep, case, repro))


# ---- invariance ---------------------------------------------------------------------

def assert_invariant(fn, *, op: str, dtype: str = "fp32", gradient: bool = False,
                     contract: Optional[str] = None, profile: Optional[str] = None, like: str = "numpy",
                     device: Any = None, provenance=None, allow_inconclusive: bool = False):
    """Assert that ``fn`` gives each batch row bitwise the same outputs whatever the batch
    around it, across the compositions the contract names for the cell (batch sizes 1 to
    B, chunks, reversed and rotated rows, padding rows, strided rows, a repeat run): the
    forward_invariance cell of ``op`` (``gradient=True``: gradient_invariance, ``fn`` then
    being the contract's gradient operator of op, e.g. rms_norm_bwd).

    ``fn`` is called with the operator's tensors and parameters by name and returns its
    outputs (see :func:`numoracle.judge`). Raises ``AssertionError`` when the cell is not
    PASS (INCONCLUSIVE passes only with ``allow_inconclusive``): the message names the
    first composition that differs, the output, the batch row and the element within the
    row, both values and their bits; or why the run was REJECTED (its provenance
    disagrees with the profile). Returns the :class:`numoracle.Cell`."""
    from ._judge import judge

    j = "gradient_invariance" if gradient else "forward_invariance"
    m = judge(op, dtype, None if gradient else fn, fn if gradient else None, contract=contract,
              profile=profile, judgments=[j], like=like, device=device, provenance=provenance)
    cell = m.cells[j]
    if cell.verdict == "PASS" or cell.verdict == "N/A" or (cell.verdict == "INCONCLUSIVE" and allow_inconclusive):
        return cell
    lines = [f"numoracle: {cell.operator} {dtype} not batch-invariant: {j} {cell.verdict} "
             f"(contract {m.to_dict()['contract']['path']}, profile {m.profile})"]
    fd = cell.first_difference()
    if fd is not None:
        lines.append(f"  first difference: composition {fd['configuration']}, output {fd['output']}, "
                     f"row {fd['row']}, element {fd['element']}")
        lines.append(f"    reference (whole batch): {_g(fd['reference'])} ({fd['reference_bits']})")
        lines.append(f"    this composition:        {_g(fd['candidate'])} ({fd['candidate_bits']})")
    lines.append(f"  {cell.detail}")
    comp = [f"{c['name']}: {'identical' if c['identical'] else 'skipped' if c['skipped'] else 'differs'}"
            for c in cell.configurations]
    if comp:
        lines.append("  compositions: " + ", ".join(comp))
    raise AssertionError("\n".join(lines))
