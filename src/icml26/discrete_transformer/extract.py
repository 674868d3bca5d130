"""Extraction (Sec. 4 as reconstructed): attention heads by hypothesis testing, MLPs by
symbolic regression, then assembly into a program that is run batched (an interpreter over
the extracted statements) and printed as readable Python.

Step 0: fix every read to its argmax (and turn Gumbel noise off) before recording anything.
Step 1: for each head, compare its attention rows with a library of routing hypotheses
        (j* = i - k, first token, argmax / argmin of a key slot, uniform average) and accept
        the best one if its agreement is >= 99.5% and a one-sided binomial test rejects
        "agreement <= 95%" at p < 0.01.
Step 2: probe each MLP on the inputs it actually sees and fit a sparse formula by an
        exhaustive least-squares search over a small term library (our stand-in for
        gplearn/PySR), snapping coefficients to simple numbers when that keeps the fit.
Step 3: compose the statements; y = sum_k c_k v^(k) + beta (snapped); round for integer tasks.
"""

from __future__ import annotations

import itertools
import textwrap
from dataclasses import dataclass, field

import sympy
import torch
from scipy.stats import binomtest

from .config import DTConfig
from .data import TaskData
from .model import DiscreteTransformer

TEXT_WIDTH = 96  # characters: a displayed program fits the page's code column

COPY_MASS = 0.9  # a row "copies from j" when A_ij >= 0.9
UNIFORM_TOL = 0.05  # a row "averages" when max_j |A_ij - 1/(i+1)| <= 0.05


# ---------------------------------------------------------------- step 1: hypothesis tests
def hypothesis_sources(name: str, N: int, keys: torch.Tensor | None = None) -> torch.Tensor:
    """Source index j*(i) of a point hypothesis: 'offset_k' (j = max(i - k, 0)), 'first'
    (j = 0), 'argmax_key' / 'argmin_key' (over j <= i of the key slot, keys (B, N)).
    Returns (N,) or (B, N) long."""
    i = torch.arange(N, device=None if keys is None else keys.device)
    if name.startswith("offset_"):
        return (i - int(name.split("_")[1])).clamp_min(0)
    if name == "first":
        return torch.zeros_like(i)
    if name in ("argmax_key", "argmin_key"):
        if keys is None:
            raise ValueError(f"hypothesis {name!r} needs a key slot")
        sign = 1.0 if name == "argmax_key" else -1.0
        causal = i[None, :] <= i[:, None]  # (N, N)
        s = (sign * keys)[:, None, :].expand(-1, N, -1).masked_fill(~causal, float("-inf"))  # (B, N, N)
        return s.argmax(-1)
    raise ValueError(f"unknown point hypothesis {name!r}")


def hypothesis_library(max_offset: int, with_keys: bool) -> list[str]:
    """The routing patterns tested for every head."""
    names = [f"offset_{k}" for k in range(max_offset + 1)] + ["first"]
    return names + (["argmax_key", "argmin_key"] if with_keys else []) + ["uniform"]


def agreement(A: torch.Tensor, mask: torch.Tensor, name: str,
              keys: torch.Tensor | None = None) -> tuple[int, int]:
    """(successes, trials) of hypothesis `name` on attention A (B, N, N) over
    `mask` (B, N)."""
    if A.dim() != 3 or A.shape[1] != A.shape[2] or mask.shape != A.shape[:2]:
        raise ValueError(f"A must be (B, N, N) and mask (B, N); got {tuple(A.shape)}, {tuple(mask.shape)}")
    B, N, _ = A.shape
    if name == "uniform":
        i = torch.arange(N, device=A.device)
        causal = (i[None, :] <= i[:, None]).to(A.dtype)  # (N, N)
        target = causal / causal.sum(-1, keepdim=True)
        ok = (A - target).abs().amax(-1) <= UNIFORM_TOL  # (B, N)
    else:
        src = hypothesis_sources(name, N, keys).expand(B, N)  # (B, N)
        ok = A.gather(-1, src[..., None])[..., 0] >= COPY_MASS
    return int(ok[mask].sum()), int(mask.sum())


@dataclass
class HeadTest:
    best: str
    agreement: float
    p_value: float
    accepted: bool
    all_agreements: dict[str, float] = field(default_factory=dict)


def hypothesis_test(A: torch.Tensor, mask: torch.Tensor, config: DTConfig,
                    keys: torch.Tensor | None = None) -> HeadTest:
    """Hypothesis test of one head: best pattern, its agreement, binomial
    p-value, accepted?"""
    rates, counts = {}, {}
    for name in hypothesis_library(config.max_offset, keys is not None):
        k, n = agreement(A, mask, name, keys)
        rates[name], counts[name] = k / max(n, 1), (k, n)
    best = max(rates, key=lambda h: (rates[h], -list(rates).index(h)))
    k, n = counts[best]
    p = float(binomtest(k, n, config.null_agreement,
                        alternative="greater").pvalue) if n else 1.0
    return HeadTest(
        best, rates[best], p,
        rates[best] >= config.accept_agreement and p < config.p_value, rates)


# ---------------------------------------------------------------- step 2: symbolic regression
TERMS_2 = {"1": lambda a, b: torch.ones_like(a), "a": lambda a, b: a, "b": lambda a, b: b, "a*b": lambda a, b: a * b,
           "a**2": lambda a, b: a**2, "b**2": lambda a, b: b**2, "Abs(a)": lambda a, b: a.abs(),
           "Abs(b)": lambda a, b: b.abs(), "Max(a, b)": torch.maximum, "Min(a, b)": torch.minimum}
TERMS_1 = {"1": lambda a, b: torch.ones_like(a), "a": lambda a, b: a, "a**2": lambda a, b: a**2,
           "a**3": lambda a, b: a**3, "Abs(a)": lambda a, b: a.abs()}


@dataclass
class SymbolicFit:
    terms: tuple[str, ...]
    coefs: tuple[float, ...]
    rel_mse: float
    snapped: bool

    def evaluate(self, inputs: torch.Tensor) -> torch.Tensor:
        """inputs (..., m) -> (...)."""
        lib = TERMS_2 if inputs.shape[-1] == 2 else TERMS_1
        a = inputs[..., 0]
        b = inputs[..., 1] if inputs.shape[-1] == 2 else a
        out = torch.zeros_like(a)
        for t, c in zip(self.terms, self.coefs):
            out = out + c * lib[t](a, b)
        return out

    def expr(self, names: tuple[str, ...]) -> sympy.Expr:
        """The formula as a sympy expression in the variables `names` (simplified)."""
        sym = dict(zip(("a", "b"), sympy.symbols(list(names) + ([names[0]] if len(names) == 1 else []))))
        e = sum((_nice(c) * sympy.sympify(t, locals=sym) for t, c in zip(self.terms, self.coefs)), sympy.Integer(0))
        return sympy.simplify(e)


def _nice(c: float) -> sympy.Expr:
    r = round(c * 2) / 2
    return sympy.nsimplify(r) if r == c else sympy.Float(c, 4)


def _rel_mse(pred: torch.Tensor, target: torch.Tensor) -> float:
    var = target.var(unbiased=False).clamp_min(1e-12)
    return float(((pred - target) ** 2).mean() / var)


def fit_symbolic(inputs: torch.Tensor, target: torch.Tensor, max_terms: int = 3,
                 tol: float = 1e-3) -> SymbolicFit:
    """Exhaustive sparse least squares: the smallest term subset whose fit
    reaches relative MSE <= `tol` (else the best subset of size `max_terms`);
    then coefficients are snapped to multiples of 1/2 if the snapped fit stays
    within max(2 x, tol / 10) of that error."""
    if inputs.dim() != 2 or inputs.shape[1] not in (1, 2) or target.shape != inputs.shape[:1]:
        raise ValueError(f"inputs must be (n, 1|2) and target (n,), got {tuple(inputs.shape)}, {tuple(target.shape)}")
    X64, t64 = inputs.double().cpu(), target.double().cpu()
    lib = TERMS_2 if X64.shape[1] == 2 else TERMS_1
    a, b = X64[:, 0], X64[:, -1]
    cols = {k: f(a, b) for k, f in lib.items()}
    best = None
    for size in range(1, max_terms + 1):
        for subset in itertools.combinations(cols, size):
            M = torch.stack([cols[k] for k in subset], 1)  # (n, size)
            coef = torch.linalg.lstsq(
                M, t64[:, None], driver="gelsd").solution[:, 0]
            err = _rel_mse(M @ coef, t64)
            if best is None or err < best[2] - 1e-15:
                best = (subset, coef, err)
        if best[2] <= tol:
            break
    subset, coef, err = best
    fit = SymbolicFit(tuple(subset), tuple(float(c) for c in coef), err, False)
    snapped = tuple(round(c * 2) / 2 for c in fit.coefs)
    trial = SymbolicFit(fit.terms, snapped, 0.0, True)
    trial.rel_mse = _rel_mse(trial.evaluate(X64), t64)
    if trial.rel_mse <= max(2 * err, tol / 10):
        keep = ([(t, c) for t, c in zip(trial.terms, snapped) if c != 0.0]
                or [("1", 0.0)])
        fit = SymbolicFit(tuple(t for t, _ in keep), tuple(c for _, c in keep),
                          trial.rel_mse, True)
    return fit


# ---------------------------------------------------------------- step 3: the program
@dataclass
class HeadStmt:
    out: str
    hypothesis: str
    value: str
    key: str
    test: HeadTest


@dataclass
class MLPStmt:
    out: str
    inputs: tuple[str, ...]
    fit: SymbolicFit


@dataclass
class Program:
    statements: list
    readout: dict  # slot name -> coefficient c_k (zeros dropped)
    beta: float
    discrete: bool

    @property
    def n_heads_accepted(self) -> int:
        return sum(s.test.accepted for s in self.statements if isinstance(s, HeadStmt))

    @property
    def n_heads(self) -> int:
        return sum(isinstance(s, HeadStmt) for s in self.statements)


def extract_program(model: DiscreteTransformer, data: TaskData, tau: float, config: DTConfig,
                    seed: int = 0) -> Program:
    """Steps 0-3 on held-out `data`: argmax reads, hypothesis tests, symbolic regression."""
    if not isinstance(model, DiscreteTransformer):
        raise TypeError("extract_program needs a DiscreteTransformer")
    names = model.slot_names
    with torch.no_grad():
        _, tr = model(data.x, tau, hard=True, trace=True)  # step 0: argmax reads, no noise
    slots = tr["slots"]  # (B, N, S_final)
    gen = torch.Generator().manual_seed(seed)
    stmts: list = []
    for layer, (heads, mlp) in enumerate(zip(model.heads, model.mlps)):
        for h, head in enumerate(heads):
            keys = slots[..., head.k.choice]
            test = hypothesis_test(tr["attn"][layer][h], data.mask, config, keys)
            stmts.append(HeadStmt(f"a{layer + 1}{h + 1}", test.best, names[head.u.choice], names[head.k.choice], test))
        inp = tr["mlp_in"][layer].reshape(-1, len(mlp.reads))  # (B * N, m)
        out = slots[..., names.index(f"m{layer + 1}")].reshape(-1)  # (B * N,)
        pick = torch.randperm(inp.shape[0], generator=gen)[: config.n_probe].to(inp.device)
        fit = fit_symbolic(inp[pick], out[pick], config.sr_max_terms, config.sr_tol)
        stmts.append(MLPStmt(f"m{layer + 1}", tuple(names[r.choice] for r in mlp.reads), fit))
    readout, beta = fit_readout(slots.reshape(-1, len(names)), model.readout.detach(), float(model.beta.detach()),
                                names, config.sr_max_terms, config.sr_tol, gen, config.n_probe)
    return Program(prune(stmts, readout), readout, beta, data.discrete)


def fit_readout(slots: torch.Tensor, coefs: torch.Tensor, beta: float,
                names: list[str], max_terms: int = 3, tol: float = 1e-3,
                generator: torch.Generator | None = None,
                n_probe: int = 4000) -> tuple[dict, float]:
    """Symbolic regression of the linear readout y = sum_k c_k v^(k) + beta on
    the observed slots (n, S): the smallest subset of <= `max_terms` slots
    (plus a constant) whose fit, with coefficients snapped to multiples of 1/2,
    stays within relative MSE tol / 10 of the network's readout; otherwise the
    network's own coefficients."""
    if slots.dim() != 2 or slots.shape[1] != coefs.numel() or len(names) != coefs.numel():
        raise ValueError(f"slots must be (n, {coefs.numel()}) with one name per slot, got {tuple(slots.shape)}")
    pick = (torch.randperm(slots.shape[0], generator=generator)[:n_probe]
            .to(slots.device))
    X = slots[pick].double().cpu()
    ref = X @ coefs.double().cpu() + beta
    # the constant is always in the fit
    usable = [k for k, n in enumerate(names) if n != "one"]
    for size in range(1, max_terms + 1):
        for subset in itertools.combinations(usable, size):
            M = torch.cat([X[:, list(subset)],  # (n, size + 1)
                           torch.ones(X.shape[0], 1, dtype=X.dtype)], 1)
            sol = torch.linalg.lstsq(
                M, ref[:, None], driver="gelsd").solution[:, 0]
            snapped = torch.round(2 * sol) / 2
            if (_rel_mse(M @ snapped, ref) <= tol / 10
                    and bool((snapped[:-1] != 0).all())):
                return ({names[k]: float(c)
                         for k, c in zip(subset, snapped[:-1])},
                        float(snapped[-1]))
    return {n: float(c) for n, c in zip(names, coefs) if float(c) != 0.0}, beta


def prune(statements: list, readout: dict) -> list:
    """Drop statements whose output the readout never uses (dead code), last to first."""
    live, kept = set(readout), []
    for s in reversed(statements):
        if s.out not in live:
            continue
        kept.append(s)
        if isinstance(s, HeadStmt):
            live |= {s.value} | ({s.key} if s.hypothesis in ("argmax_key", "argmin_key") else set())
        else:
            live |= set(s.inputs)
    return kept[::-1]


def run_program(program: Program, x: torch.Tensor) -> torch.Tensor:
    """Execute the extracted statements on x (B, N), batched over sequences and
    positions."""
    if x.dim() != 2:
        raise ValueError(f"x must be (B, N), got {tuple(x.shape)}")
    B, N = x.shape
    env = {"x": x,
           "pos": torch.arange(N, device=x.device, dtype=x.dtype).expand(B, N),
           "one": torch.ones_like(x)}
    i = torch.arange(N, device=x.device)
    for s in program.statements:
        if isinstance(s, HeadStmt):
            v = env[s.value]
            if s.hypothesis == "uniform":
                env[s.out] = v.cumsum(1) / (i + 1).to(x.dtype)
            else:
                src = hypothesis_sources(  # (B, N)
                    s.hypothesis, N, env[s.key]).expand(B, N)
                env[s.out] = v.gather(1, src)
        else:
            env[s.out] = s.fit.evaluate(
                torch.stack([env[n] for n in s.inputs], -1))
    y = sum((c * env[n] for n, c in program.readout.items()),
            torch.zeros_like(x)) + program.beta
    return y.round() if program.discrete else y


def _final_expr(program: Program) -> sympy.Expr:
    e = sum((_nice(c) * sympy.Symbol(f"{n}[i]") for n, c in program.readout.items()), sympy.Integer(0))
    return e + _nice(program.beta)


def program_source(program: Program) -> str:
    """The program as readable Python (for display; it is executed by `run_program`)."""
    lines = ["def program(x):", "    N = len(x)", "    pos, one = list(range(N)), [1] * N"]
    outs = [s.out for s in program.statements]
    lines.append("    " + ", ".join(outs) + " = " + ", ".join("[0.0] * N" for _ in outs) + "")
    lines += ["    y = [0.0] * N", "    for i in range(N):"]
    for s in program.statements:
        if isinstance(s, HeadStmt):
            h = s.hypothesis
            if h.startswith("offset_"):
                k = int(h.split("_")[1])
                rhs = f"{s.value}[i]" if k == 0 else f"{s.value}[max(i - {k}, 0)]"
            elif h == "first":
                rhs = f"{s.value}[0]"
            elif h == "uniform":
                rhs = f"sum({s.value}[:i + 1]) / (i + 1)"
            else:
                fn = "max" if h == "argmax_key" else "min"
                rhs = f"{s.value}[{fn}(range(i + 1), key=lambda j: {s.key}[j])]"
            tag = "accepted" if s.test.accepted else "REJECTED"
            lines.append(f"        {s.out}[i] = {rhs}  # {h}: {100 * s.test.agreement:.1f}% ({tag})")
        else:
            e = s.fit.expr(s.inputs)
            e = e.subs({sympy.Symbol(n): sympy.Symbol(f"{n}[i]") for n in set(s.inputs)})
            lines.append(f"        {s.out}[i] = {sympy.sstr(e)}")
    rhs = sympy.sstr(_final_expr(program))
    lines.append(f"        y[i] = round({rhs})" if program.discrete else f"        y[i] = ({rhs})")
    lines.append("    return y")
    # A long expression wraps at a space inside its parentheses (still valid Python), indented,
    # so the program fits the page's code column.
    wrapped = []
    for line in lines:
        indent = len(line) - len(line.lstrip())
        wrapped += textwrap.wrap(line, TEXT_WIDTH, initial_indent="", subsequent_indent=" " * (indent + 4),
                                 break_long_words=False, break_on_hyphens=False, drop_whitespace=True) \
            if len(line) > TEXT_WIDTH and "(" in line else [line]
    return "\n".join(wrapped)


def evaluate_predictions(pred: torch.Tensor, data: TaskData) -> dict[str, float]:
    """Exact match (rounded, per position) and relative MSE (MSE / Var y) on `data.mask`."""
    if pred.shape != data.y.shape:
        raise ValueError(f"prediction shape {tuple(pred.shape)} != target shape {tuple(data.y.shape)}")
    p, y = pred[data.mask].double(), data.y[data.mask].double()
    return {"exact": float((p.round() == y.round()).double().mean()),
            "rel_mse": float(((p - y) ** 2).mean() / y.var(unbiased=False).clamp_min(1e-12))}
