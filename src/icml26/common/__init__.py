"""What every chapter shares: device, seeding, presets, progress bars, plotting style and figure
policy, source display, timing, the claims ledger, checkpoints and the sandbox."""

from .checkpoints import Checkpointer, load_checkpoint, save_checkpoint
from .device import device_banner, resolve_device
from .ledger import (
    INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTED, PARTLY_REPRODUCED, REPRODUCED, STATUSES, ClaimStatus, Ledger,
    chapter_verdict, combine_sub_results, is_fragile, paired_test_p, per_seed_flags, per_seed_values,
    read_ledger, robust_status,
)
from .plotting import BASELINE, METHOD, PALETTE, add_colorbar, book_figure, check_figure, integer_ticks, use_book_style
from .presets import PRESET_NAMES, select_preset
from .progress import progress
from .sandbox import SandboxError, SandboxResult, run_sandboxed
from .seeding import seed_everything
from .source import excerpt, show_source, source_of
from .timing import Timer

__all__ = [
    "BASELINE", "INCONCLUSIVE", "METHOD", "NOT_REPRODUCED", "NOT_TESTED", "PALETTE", "PARTLY_REPRODUCED",
    "PRESET_NAMES", "REPRODUCED", "STATUSES", "Checkpointer", "ClaimStatus", "Ledger", "SandboxError",
    "SandboxResult", "Timer", "add_colorbar", "book_figure", "chapter_verdict", "check_figure",
    "combine_sub_results", "device_banner", "excerpt", "integer_ticks", "is_fragile", "load_checkpoint",
    "paired_test_p", "per_seed_flags", "per_seed_values", "progress", "read_ledger", "resolve_device",
    "robust_status", "run_sandboxed", "save_checkpoint", "seed_everything", "select_preset", "show_source",
    "source_of", "use_book_style",
]
