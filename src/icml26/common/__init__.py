"""What every chapter shares: device, seeding, presets, progress bars, plotting style,
source display, timing, claim reporting, checkpoints and the sandbox."""

from .checkpoints import Checkpointer, load_checkpoint, save_checkpoint
from .claims import ClaimResult, format_figure, read_chapter_record, report_claim
from .device import device_banner, resolve_device
from .plotting import BASELINE, METHOD, PALETTE, use_book_style
from .presets import PRESET_NAMES, select_preset
from .progress import progress
from .sandbox import SandboxError, SandboxResult, run_sandboxed
from .seeding import seed_everything
from .source import show_source, source_of
from .timing import Timer

__all__ = [
    "BASELINE", "METHOD", "PALETTE", "PRESET_NAMES", "Checkpointer", "ClaimResult",
    "SandboxError", "SandboxResult", "Timer", "device_banner", "format_figure",
    "load_checkpoint", "progress", "read_chapter_record", "report_claim", "resolve_device",
    "run_sandboxed", "save_checkpoint", "seed_everything", "select_preset", "show_source",
    "source_of", "use_book_style",
]
