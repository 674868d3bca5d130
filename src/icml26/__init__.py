"""ICML 2026, Runnable: one package per paper, plus `icml26.common` shared by every chapter."""

__version__ = "0.1.0"
