"""What every chapter shares: device, seeding, presets, progress bars, plotting style and figure
policy, source display, numbers glued into the prose, Markdown table cells, timing, the claims ledger, the sandbox and
the Explore panel.

Names load lazily (PEP 562), so ``icml26.common.ledger`` and the presets import no torch: the
scoreboard, the evidence checks and ``gpucheck`` read ledgers without it.
"""

from importlib import import_module

_HOMES = {
    "device": ("device_banner", "resolve_device", "CPU_THREADS"),
    "explorer": ("explore", "explore_mode"),
    "glued": ("glue",),
    "ledger": ("ALPHA", "INCONCLUSIVE", "MIN_ITEMS", "MIN_SEEDS", "NOT_REPRODUCED", "NOT_TESTED",
               "PARTLY_REPRODUCED", "REPRODUCED", "STATUSES", "ClaimStatus", "Competence", "Ledger",
               "SizeCheck", "ThresholdChange", "bootstrap_interval", "chapter_verdict", "combine_sub_results",
               "competence_reason", "gate_competence", "half_size", "is_fragile", "paired_gain",
               "paired_test_p", "per_seed_flags", "per_seed_values", "read_ledger", "replicated_status",
               "robust_status", "seed_interval", "seed_statuses", "seed_test_p", "size_against_achievable"),
    "plotting": ("BASELINE", "METHOD", "PALETTE", "add_colorbar", "book_figure", "check_figure", "integer_ticks",
                 "use_book_style"),
    "presets": ("PRESET_NAMES", "check_expected_time", "select_preset"),
    "progress": ("progress",),
    "sandbox": ("SandboxError", "SandboxResult", "run_sandboxed"),
    "seeding": ("seed_everything",),
    "source": ("excerpt", "show_source", "source_of"),
    "tables": ("markdown_cell",),
    "timing": ("Timer",),
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module 'icml26.common' has no attribute {name!r}")
    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
