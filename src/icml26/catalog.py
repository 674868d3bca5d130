"""The book's table of papers: slug, short title and the part of the book it belongs to.

The scoreboard page, the chapter runner and the guard tests read this one list.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paper:
    slug: str
    title: str
    part: str


PARTS = (
    "Geometry and symmetry",
    "Learning theory and optimisation",
    "Interpretable and trustworthy models",
    "Sequence and multimodal models",
    "Agents, control and generation",
)

PAPERS = (
    Paper("dq_sync", "Dual Quaternion SE(3) Synchronization with Recovery Guarantees", PARTS[0]),
    Paper("planar_symmetry", "Planar Symmetric Pattern Generation", PARTS[0]),
    Paper("w2sg_bregman", "Weak-to-Strong Generalization via Bregman Bias–Variance Decomposition", PARTS[1]),
    Paper("asymmetric_weighting", "Asymmetric Prompt Weighting for Reinforcement Learning with Verifiable Rewards", PARTS[1]),
    Paper("conformal_mip_stop", "Conformal Prediction for Early Stopping in Mixed Integer Optimization", PARTS[1]),
    Paper("tt_sparse", "TT-Sparse: Learning Sparse Rule Models with Differentiable Truth Tables", PARTS[2]),
    Paper("discrete_transformer", "Weights to Code: Extracting Interpretable Algorithms from the Discrete Transformer", PARTS[2]),
    Paper("model_clone", "An In-Depth Study on Deep Learning Model Cloning", PARTS[2]),
    Paper("prism", "Language as a Wave Phenomenon: Semantic Phase Locking and Interference in Neural Networks", PARTS[3]),
    Paper("kskt", "Know Thyself, Know Thy User: Intrinsic Dual-Perspective Reasoning for Role-Playing LLMs", PARTS[3]),
    Paper("tam", "Task-Aware Mechanism: Hybrid MoE Vision Tower Towards Holistic Video Understanding", PARTS[3]),
    Paper("deep_image_search", "DeepImageSearch: Benchmarking Multimodal Agents for Context-Aware Image Retrieval in Visual Histories", PARTS[3]),
    Paper("step_diffusion_policy", "STEP: Warm-Started Visuomotor Policies with Spatiotemporal Consistency Prediction", PARTS[4]),
    Paper("usb_rl", "Learning Reward–Cost Balance in Safe RL via Score-Based World Models", PARTS[4]),
    Paper("dmawm", "Learning Disentangled Multi-Agent World Model for Decentralized Control", PARTS[4]),
    Paper("lmac", "LLM-Guided Communication for Cooperative Multi-Agent Reinforcement Learning", PARTS[4]),
    Paper("reconfigure", "Learning to Reconfigure", PARTS[4]),
    Paper("grasp", "GRASP: Graph Reasoning via Agentic Solving and Probing of LLMs", PARTS[4]),
    Paper("diffusion_bridge", "Structured Diffusion Bridges: Inductive Bias for Denoising Diffusion Bridges", PARTS[4]),
)
SLUGS = tuple(p.slug for p in PAPERS)


def project_root() -> Path:
    """The repository root (the folder holding `chapters/`), found from this file."""
    return Path(__file__).resolve().parents[2]


def chapter_path(slug: str) -> Path:
    """The notebook of a chapter; an unknown slug is an error naming the valid ones."""
    if slug not in SLUGS:
        raise ValueError(f"unknown chapter {slug!r}; valid chapters: {', '.join(SLUGS)}")
    return project_root() / "chapters" / f"{slug}.ipynb"


def written_chapters() -> list[str]:
    """Slugs whose notebook exists, in book order."""
    return [s for s in SLUGS if chapter_path(s).is_file()]
