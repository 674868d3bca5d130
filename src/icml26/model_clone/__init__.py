"""An In-Depth Study on Deep Learning Model Cloning (ICML 2026), reconstructed.

Modules: `clones` (taxonomy and clone operations), `models` (digits MLP/CNN zoo), `graph`
(normalised computational graphs, WL kernel, GED), `weights` (alignment-free statistics),
`detector` (combined score, threshold calibration), `baselines` (aligned cosine, key/shape
Jaccard, output cosine), `experiment` (benchmark, lineage, reproduction check), `plots`, `config`.
"""

from .baselines import aligned_cosine, output_cosine, state_dict_jaccard
from .clones import CLONE_TYPES, OPERATIONS, CloneSpec, apply_clone, clone_specs, permute_hidden_units, rescale_layers
from .config import EXPECTED_TIME, PRESETS, CloneConfig, get_config
from .detector import calibrate_threshold, clone_scores, fingerprint, model_similarity
from .experiment import run_experiment
from .graph import GraphExportError, ged_similarity, normalised_graph, wl_similarity
from .weights import describe_tensor, weight_distance, weight_similarity

__all__ = [
    "CLONE_TYPES", "OPERATIONS", "CloneConfig", "CloneSpec", "EXPECTED_TIME", "GraphExportError", "PRESETS",
    "aligned_cosine", "apply_clone", "calibrate_threshold", "clone_scores", "clone_specs", "describe_tensor",
    "fingerprint", "ged_similarity", "get_config", "model_similarity", "normalised_graph", "output_cosine",
    "permute_hidden_units", "rescale_layers", "run_experiment", "state_dict_jaccard", "weight_distance", "weight_similarity",
    "wl_similarity",
]
