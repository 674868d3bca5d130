"""Exact rule extraction: truth tables -> Quine-McCluskey (sympy SOPform / POSform) -> DNF
and CNF per node, and a torch-free rule-only predictor.

Complexity (one measure for every method): a Boolean formula built from literals with
binary AND/OR costs (#literals + #connectives); a model that is a weighted sum of formulas
adds one '+' connective per extra non-zero weight of each output. See `formula_complexity`
and `sum_complexity`.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

import numpy as np
import sympy
import torch
from sympy.logic import POSform, SOPform

from .model import FrozenTTSparse, node_preactivation

TEXT_WIDTH = 96  # characters: printed rules fit the page's code column

Literal = tuple[int, bool]  # (input bit index, positive?)


def formula_complexity(clauses: tuple[tuple[Literal, ...], ...] | None) -> int:
    """#literals + #binary connectives of a DNF/CNF (0 for a constant).

    L literals in T clauses need sum(len - 1) inner and T - 1 outer connectives:
    2L - 1.
    """
    if not clauses:
        return 0
    n_lit = sum(len(c) for c in clauses)
    return n_lit + sum(len(c) - 1 for c in clauses) + len(clauses) - 1


def sum_complexity(term_costs, n_weights_per_output) -> int:
    """Complexity of a weighted sum of formulas: each formula once, plus the '+'
    connectives (n_weights - 1 per output)."""
    return int(sum(term_costs)
               + sum(max(int(n) - 1, 0) for n in n_weights_per_output))


@dataclass(frozen=True)
class Formula:
    """A Boolean formula over input bits in DNF (OR of ANDs) or CNF (AND of ORs).

    `clauses` are tuples of literals; `constant` is set (True/False) for constant formulas.
    """

    form: str
    clauses: tuple[tuple[Literal, ...], ...] = ()
    constant: bool | None = None

    def evaluate(self, bits: np.ndarray) -> np.ndarray:
        """(N, F) {0,1} array -> (N,) bool."""
        n = bits.shape[0]
        if self.constant is not None:
            return np.full(n, self.constant)
        inner_all = self.form == "dnf"  # DNF: clause = AND; CNF: clause = OR
        out = np.zeros(n, bool) if inner_all else np.ones(n, bool)
        for clause in self.clauses:
            lits = np.stack([(bits[:, i] > 0.5) == pos for i, pos in clause], 1)  # (N, len)
            val = lits.all(1) if inner_all else lits.any(1)
            out = (out | val) if inner_all else (out & val)
        return out

    @property
    def complexity(self) -> int:
        return formula_complexity(self.clauses) if self.constant is None else 0

    def to_text(self, literal=lambda i, pos: f"x{i}" if pos else f"~x{i}") -> str:
        if self.constant is not None:
            return str(self.constant)
        inner, outer = (" AND ", " OR ") if self.form == "dnf" else (" OR ", " AND ")
        parts = [inner.join(literal(i, pos) for i, pos in c) for c in self.clauses]
        if len(parts) == 1:
            return parts[0]
        return outer.join(f"({p})" if len(c) > 1 else p for p, c in zip(parts, self.clauses))


def _parse(expr, variables: tuple[int, ...], form: str) -> Formula:
    if expr is sympy.true or expr is True:
        return Formula(form, constant=True)
    if expr is sympy.false or expr is False:
        return Formula(form, constant=False)
    outer, inner = (sympy.Or, sympy.And) if form == "dnf" else (sympy.And, sympy.Or)

    def literal(e) -> Literal:
        if isinstance(e, sympy.Not):
            return (variables[int(e.args[0].name[1:])], False)
        return (variables[int(e.name[1:])], True)

    def clause(e) -> tuple[Literal, ...]:
        return tuple(sorted(literal(a) for a in (e.args if isinstance(e, inner) else (e,))))

    terms = expr.args if isinstance(expr, outer) else (expr,)
    return Formula(form, tuple(sorted(clause(t) for t in terms)))


@lru_cache(maxsize=65536)
def _minimise_cached(n_vars: int, minterms: tuple, dontcares: tuple, form: str):
    syms = sympy.symbols(f"v0:{n_vars}")
    fn = SOPform if form == "dnf" else POSform
    return fn(list(syms), [list(m) for m in minterms], [list(d) for d in dontcares])


def minimise(variables, minterms, dontcares=(), form: str = "dnf") -> Formula:
    """Quine-McCluskey minimisation (sympy SOPform for DNF, POSform for CNF).

    `variables`: the input-bit index of each truth-table column; `minterms` /
    `dontcares`: 0/1 tuples (one entry per variable) where the function is 1 /
    may be anything.
    """
    if form not in ("dnf", "cnf"):
        raise ValueError(f"unknown form {form!r}; valid forms: dnf, cnf")
    variables = tuple(int(v) for v in variables)
    if not variables:
        raise ValueError("a formula needs at least one variable")
    minterms = tuple(sorted(tuple(int(b) for b in m) for m in minterms))
    dontcares = tuple(sorted(tuple(int(b) for b in m) for m in dontcares))
    if any(len(m) != len(variables) for m in minterms + dontcares):
        raise ValueError("every minterm/don't-care needs one bit per variable")
    return _parse(_minimise_cached(len(variables), minterms, dontcares, form),
                  variables, form)


def enumerate_truth_table(
    frozen: FrozenTTSparse, node: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All 2^k_j rows of node j over its active inputs.

    Returns (active input bits (k_j,), patterns (2^k_j, k_j) in {0,1},
    outputs (2^k_j,) bool). Uses the network's own `node_preactivation`, so
    rounding is identical to the forward pass.
    """
    if not 0 <= node < frozen.n_nodes:
        raise ValueError(f"node {node} out of range 0..{frozen.n_nodes - 1}")
    active = frozen.edge_mask[node].bool()
    slots = active.nonzero()[:, 0]
    kj = int(slots.numel())
    patterns = np.array(list(product((0, 1), repeat=kj)),
                        dtype=np.float32).reshape(2 ** kj, kj)
    # (R, k)
    x_sel = torch.zeros(2 ** kj, frozen.idx.shape[1],
                        device=frozen.idx.device)
    x_sel[:, slots] = torch.as_tensor(patterns, device=x_sel.device)
    with torch.no_grad():
        h = node_preactivation(x_sel, (frozen.w * frozen.edge_mask)[node],
                               frozen.b[node])
    return (frozen.idx[node, slots].cpu().numpy(), patterns.astype(np.int8),
            (h > 0).cpu().numpy())


def _dont_cares(bits, patterns, mode: str, encoder=None, X_train=None) -> list:
    if mode == "none" or len(bits) == 0:
        return []
    if mode == "structural":
        if encoder is None:
            raise ValueError("dont_cares='structural' needs the encoder")
        return [p for p in patterns if encoder.impossible(bits, p)]
    if mode == "unseen":
        if X_train is None:
            raise ValueError("dont_cares='unseen' needs X_train")
        seen = {tuple(r) for r in (np.asarray(X_train)[:, bits] > 0.5).astype(np.int8)}
        return [p for p in patterns if tuple(p) not in seen]
    raise ValueError(f"unknown dont_cares mode {mode!r}; valid: none, structural, unseen")


@dataclass
class RuleSet:
    """The whole model as rules: score_o = c_o + sum_j A_oj [node formula_j] + sum_s B_os s.

    `dnf[j]` and `cnf[j]` are node j's exact formulas; only non-constant nodes with a
    non-zero weight are kept, constants are folded into the intercept.
    """

    task: str
    dnf: list[Formula]
    cnf: list[Formula]
    weights: np.ndarray  # (out, R)
    skip_weights: np.ndarray  # (out, S)
    intercept: np.ndarray  # (out,)
    node_ids: list[int] = field(default_factory=list)

    def node_bits(self, X_bits: np.ndarray, form: str = "dnf") -> np.ndarray:
        formulas = self.dnf if form == "dnf" else self.cnf
        return np.stack([f.evaluate(X_bits) for f in formulas], 1).astype(np.float64) if formulas \
            else np.zeros((len(X_bits), 0))

    def complexity(self, form: str = "dnf") -> int:
        formulas = self.dnf if form == "dnf" else self.cnf
        nnz = (np.abs(self.weights) > 0).sum(1) + (np.abs(self.skip_weights) > 0).sum(1)
        return sum_complexity([f.complexity for f in formulas] + [1] * int((np.abs(self.skip_weights) > 0).any(0).sum()),
                              nnz)

    def to_text(self, encoder=None, form: str = "dnf", digits: int = 3) -> str:
        lit = (lambda i, pos: encoder.literal(i, pos)) if encoder is not None else \
            (lambda i, pos: f"b{i}" if pos else f"~b{i}")
        formulas = self.dnf if form == "dnf" else self.cnf
        lines = []
        for o in range(self.weights.shape[0]):
            head = f"score[{o}]" if self.weights.shape[0] > 1 else "score"
            lines.append(f"{head} = {self.intercept[o]:+.{digits}g}")
            for r, f in enumerate(formulas):
                if self.weights[o, r] != 0:
                    term = f"    {self.weights[o, r]:+.{digits}g} * [{f.to_text(lit)}]"
                    # long rules wrap at a space, indented, to fit the page's code column
                    lines += textwrap.wrap(term, TEXT_WIDTH, subsequent_indent=" " * 8, break_long_words=False)
            for s in np.nonzero(self.skip_weights[o])[0]:
                lines.append(f"    {self.skip_weights[o, s]:+.{digits}g} * skip{s}")
        return "\n".join(lines)


def explain(frozen: FrozenTTSparse, encoder=None, X_train=None, dont_cares: str = "structural",
            task: str = "binary") -> RuleSet:
    """Convert a frozen model exactly into a RuleSet (DNF and CNF per node).

    `dont_cares`: 'structural' (patterns no input can produce, from the encoder: keeps
    exactness on every input), 'unseen' (patterns absent from X_train, the paper's option:
    exact on training rows only) or 'none'.
    """
    A = (frozen.head_weight * frozen.head_mask).detach().cpu().double().numpy()  # (out, M + S)
    c = frozen.head_bias.detach().cpu().double().numpy().copy()
    M = frozen.n_nodes
    y_mean, y_std = float(frozen.y_mean), float(frozen.y_std)
    dnfs, cnfs, cols, ids = [], [], [], []
    # region: node to formula
    for j in range(M):
        if not np.any(A[:, j] != 0):
            continue
        bits, patterns, out = enumerate_truth_table(frozen, j)
        if len(bits) == 0:  # no input left: a constant node
            c += A[:, j] * float(out[0])
            continue
        dc = _dont_cares(bits, patterns, dont_cares, encoder, X_train)
        dc_set = {tuple(p) for p in dc}
        on = [tuple(p) for p, o in zip(patterns, out)
              if o and tuple(p) not in dc_set]
        dnf = minimise(bits, on, dc, "dnf")
        if dnf.constant is not None:
            c += A[:, j] * float(dnf.constant)
            continue
        dnfs.append(dnf)
        cnfs.append(minimise(bits, on, dc, "cnf"))
        cols.append(A[:, j])
        ids.append(j)
    # endregion
    weights = np.stack(cols, 1) if cols else np.zeros((A.shape[0], 0))
    return RuleSet(task, dnfs, cnfs, weights * y_std, A[:, M:] * y_std, c * y_std + y_mean, ids)


def predict_rules(rules: RuleSet, X_bits, X_skip=None,
                  form: str = "dnf") -> np.ndarray:
    """Rule-only scores (N, out) in numpy: no torch, no network."""
    X_bits = np.asarray(X_bits)
    if X_bits.ndim != 2:
        raise ValueError(f"X_bits must be 2-D (samples, bits), got shape {X_bits.shape}")
    scores = rules.node_bits(X_bits, form) @ rules.weights.T + rules.intercept
    if rules.skip_weights.shape[1]:
        if X_skip is None:
            raise ValueError("this rule set has skip terms: pass X_skip")
        scores = (scores
                  + np.asarray(X_skip, dtype=np.float64) @ rules.skip_weights.T)
    return scores
