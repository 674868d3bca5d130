"""Structure level: the normalised computational graph and its similarity.

A model is exported with `torch.export` and decomposed to core ATen ops; the graph is then
normalised (our reconstruction of the paper's "normalised computational graph"):
- only compute nodes stay, labelled by a canonical op name (`linear`, `conv`, `relu`, ...);
- names, parameter identities (placeholders of weights) and no-ops (view / reshape /
  permute / getitem / identity / clone / eval-mode dropout) are removed, their edges contracted;
- optionally a coarse shape signature, the log2 bucket of the output width, joins the label.
Similarity: the normalised Weisfeiler-Lehman subtree kernel (label-count cosine), or
1 - GED / max(|V1|, |V2|) for small graphs.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from dataclasses import dataclass

import networkx as nx
import torch
from torch import nn


class GraphExportError(RuntimeError):
    """`torch.export` could not trace a model; the message names the model and the cause."""


# canonical labels of core-ATen targets (by the op's name without overload)
CANONICAL = {
    "addmm": "linear", "linear": "linear", "mm": "matmul", "bmm": "matmul", "matmul": "matmul",
    "convolution": "conv", "conv2d": "conv", "relu": "relu", "gelu": "gelu", "tanh": "tanh", "sigmoid": "sigmoid",
    "silu": "silu", "max_pool2d_with_indices": "maxpool", "max_pool2d": "maxpool", "avg_pool2d": "avgpool",
    "mean": "mean", "_softmax": "softmax", "softmax": "softmax", "add": "add", "sub": "sub", "mul": "mul",
    "div": "div", "native_layer_norm": "layernorm", "layer_norm": "layernorm", "embedding": "embedding",
    "_native_batch_norm_legit_no_training": "batchnorm", "pow": "pow", "rsqrt": "rsqrt", "sqrt": "sqrt",
    "where": "where", "erf": "erf", "exp": "exp", "sum": "sum", "cat": "cat", "neg": "neg",
    "scaled_dot_product_attention": "attention", "_safe_softmax": "softmax",
}
# ops that do not compute anything new: their node is removed and its edges contracted
NO_OPS = {
    "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "contiguous", "clone", "detach",
    "alias", "getitem", "unsqueeze", "squeeze", "flatten", "dropout", "native_dropout", "_to_copy", "to",
    "slice", "select", "lift_fresh_copy", "alias_copy", "view_copy", "_assert_tensor_metadata", "copy",
    "_assert_async", "sym_size", "sym_constrain_range_for_size", "empty", "full", "arange", "ones", "zeros",
    "scalar_tensor", "lt", "ge", "le", "gt", "eq", "ne", "bitwise_not", "logical_not", "masked_fill", "index",
}


def _op_name(target) -> str:
    """`aten.addmm.default` -> 'addmm'; `operator.getitem` -> 'getitem'."""
    name = getattr(target, "__name__", str(target))
    if hasattr(target, "_opname"):
        return target._opname
    return name.split(".")[0]


@dataclass
class NormalisedGraph:
    """A labelled DAG plus the parameters each compute node consumes, in graph (topological) order.

    `slots` lists (node label, role, parameter name, tensor) with role 'weight' (>= 2-D) or
    'bias' (1-D). The names are only used to read the tensors; nothing compares them."""

    graph: nx.DiGraph
    slots: list[tuple[str, str, str, torch.Tensor]]

    def rebind(self, model: nn.Module) -> "NormalisedGraph":
        """The same graph with the slot tensors read from `model` (a model with identical code
        and shapes, hence an identical export): lets a detector reuse one trace."""
        state = dict(model.named_parameters())
        missing = [s[2] for s in self.slots if s[2] not in state]
        if missing:
            raise ValueError(f"model lacks the parameters {missing[:3]} of this graph; export it instead")
        return NormalisedGraph(self.graph, [(lab, role, name, state[name].detach()) for lab, role, name, _ in self.slots])

    @property
    def labels(self) -> list[str]:
        return [self.graph.nodes[n]["label"] for n in nx.topological_sort(self.graph)]


def export_program(model: nn.Module, example_inputs: tuple) -> torch.export.ExportedProgram:
    """`torch.export.export(...).run_decompositions()` of the model in eval mode, with a clear
    error naming the model and the cause when tracing fails."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(example_inputs, tuple):
        raise TypeError("example_inputs must be a tuple of tensors")
    was_training = model.training
    model.eval()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch-internal pytree deprecation notices
            return torch.export.export(model, example_inputs, strict=False).run_decompositions()
    except Exception as exc:  # noqa: BLE001 - re-raised with the cause named
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise GraphExportError(
            f"torch.export could not trace {type(model).__name__}: {type(exc).__name__}: {first[:300]} "
            "(data-dependent control flow, unsupported ops or example inputs of the wrong shape are the usual causes)"
        ) from exc
    finally:
        model.train(was_training)


def _width_bucket(node) -> int | None:
    val = node.meta.get("val")
    shape = getattr(val, "shape", None)
    if shape is None or len(shape) < 2:
        return None
    width = int(shape[1]) if len(shape) == 4 else int(shape[-1])  # channels for (n,c,h,w), features otherwise
    return int(math.log2(max(width, 1)))


def normalise_program(ep: torch.export.ExportedProgram, shape_buckets: bool = True) -> NormalisedGraph:
    """Build the normalised graph (module docstring) and the parameter slots of an exported program."""
    sig = ep.graph_signature
    param_of = {**sig.inputs_to_parameters, **getattr(sig, "inputs_to_lifted_tensor_constants", {})}
    state = {**dict(ep.named_parameters()), **ep.constants}
    fx_nodes = list(ep.graph.nodes)
    g = nx.DiGraph()
    param_src: dict[str, str] = {}  # fx node -> name of the parameter it merely forwards
    for n in fx_nodes:
        if n.op == "placeholder":
            if n.name in param_of:
                param_src[n.name] = param_of[n.name]
            elif n.name in sig.inputs_to_buffers:
                continue  # buffers (e.g. BN statistics) are not parameters
            else:
                g.add_node(n.name, label="input")
        elif n.op == "output":
            g.add_node(n.name, label="output")
            for a in n.all_input_nodes:
                g.add_edge(a.name, n.name)
        elif n.op == "call_function":
            # region: label compute nodes
            op = _op_name(n.target)
            ins = [a.name for a in n.all_input_nodes]
            if op in NO_OPS or op not in CANONICAL:
                if op not in NO_OPS and op not in CANONICAL:
                    label = op  # unknown ops keep their own name (still compared by WL)
                else:
                    if len(ins) == 1 and ins[0] in param_src:
                        # e.g. the transpose of a weight
                        param_src[n.name] = param_src[ins[0]]
                        continue
                    g.add_node(n.name, label="noop", params=[])
                    for a in ins:
                        if a in g:
                            g.add_edge(a, n.name)
                    continue
            else:
                label = CANONICAL[op]
            params = [param_src[a] for a in ins if a in param_src]
            if shape_buckets and label in ("linear", "conv", "matmul", "embedding"):
                b = _width_bucket(n)
                label = f"{label}/w{b}" if b is not None else label
            g.add_node(n.name, label=label, params=params)
            for a in ins:
                if a in g:
                    g.add_edge(a, n.name)
            # endregion
    # region: contract no-ops
    # contract the no-op nodes: connect their predecessors to their successors
    for v in [v for v, d in g.nodes(data=True) if d["label"] == "noop"]:
        for p in g.predecessors(v):
            for s in g.successors(v):
                g.add_edge(p, s)
        g.remove_node(v)
    # names removed: nodes are 0..n-1
    relabel = {v: i for i, v in enumerate(nx.topological_sort(g))}
    g = nx.relabel_nodes(g, relabel)
    # endregion
    slots = []
    for v in sorted(g.nodes):
        for pname in g.nodes[v].get("params", []):
            t = state[pname].detach()
            slots.append((g.nodes[v]["label"], "weight" if t.dim() >= 2 else "bias", pname, t))
        g.nodes[v].pop("params", None)
    return NormalisedGraph(g, slots)


def normalised_graph(model: nn.Module, example_inputs: tuple, shape_buckets: bool = True) -> NormalisedGraph:
    """Export `model` and normalise its graph (the structure-level representation G of M=(G, W))."""
    return normalise_program(export_program(model, example_inputs), shape_buckets)


def cached_graph(model: nn.Module, example_inputs: tuple, cache: dict | None = None,
                 shape_buckets: bool = True) -> NormalisedGraph:
    """`normalised_graph`, traced once per distinct (class, module tree with shapes, input
    shape) and re-bound to each model's own tensors; the export of a model depends on its code
    and shapes only (torch.export rejects value-dependent control flow)."""
    if cache is None:
        return normalised_graph(model, example_inputs, shape_buckets)
    key = (type(model).__qualname__, repr(model), tuple(tuple(x.shape) for x in example_inputs), shape_buckets)
    if key not in cache:
        cache[key] = normalised_graph(model, example_inputs, shape_buckets)
    return cache[key].rebind(model)


def wl_features(g: nx.DiGraph, iterations: int = 3) -> Counter:
    """Weisfeiler-Lehman subtree features: counts of the initial labels and of
    the hashed labels after each of `iterations` refinements, along both edge
    directions."""
    feats = Counter(f"0:{d['label']}" for _, d in g.nodes(data=True))
    if g.number_of_nodes() == 0:
        return feats
    for tag, h in (("f", g), ("b", g.reverse(copy=False))):
        with warnings.catch_warnings():
            # networkx 3.5 notes a change of its directed hashes
            warnings.simplefilter("ignore", UserWarning)
            hashes = nx.weisfeiler_lehman_subgraph_hashes(h, node_attr="label",
                                                          iterations=iterations)
        for seq in hashes.values():
            feats.update(f"{tag}{i + 1}:{x}" for i, x in enumerate(seq))
    return feats


def wl_similarity(g1: nx.DiGraph, g2: nx.DiGraph, iterations: int = 3) -> float:
    """Normalised WL subtree kernel S_G = k(G1,G2) / sqrt(k(G1,G1) k(G2,G2))
    (a cosine of feature counts); symmetric, 1 for isomorphic labelled
    graphs."""
    f1, f2 = wl_features(g1, iterations), wl_features(g2, iterations)
    dot = sum(v * f2.get(k, 0) for k, v in f1.items())
    n1 = math.sqrt(sum(v * v for v in f1.values()))
    n2 = math.sqrt(sum(v * v for v in f2.values()))
    return float(dot / (n1 * n2)) if n1 > 0 and n2 > 0 else 0.0


def ged_similarity(g1: nx.DiGraph, g2: nx.DiGraph, timeout: float = 2.0) -> float:
    """1 - GED / max(|V1|, |V2|) with unit costs and label-matched nodes (small graphs only;
    networkx returns its best bound when `timeout` seconds run out)."""
    if max(g1.number_of_nodes(), g2.number_of_nodes()) > 40:
        raise ValueError("graph edit distance is exponential; use it only on graphs of <= 40 nodes")
    d = nx.graph_edit_distance(g1, g2, node_match=lambda a, b: a["label"] == b["label"], timeout=timeout)
    return float(max(0.0, 1.0 - d / max(g1.number_of_nodes(), g2.number_of_nodes(), 1)))
