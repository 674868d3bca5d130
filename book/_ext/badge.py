"""Sphinx extension: the chapters' "Open in Colab" badge image is served from the book itself.

The notebooks link the badge image from Colab's site, so it shows on GitHub and in Jupyter. On
the built pages that image would be a request to the network, broken offline; after the build
every page's badge `src` is pointed at a local copy (`_static/colab-badge.svg`, drawn for this
book). The link around it, and the theme's own Colab launch button, open the chapter's Colab
edition (`make colab`, published to the branch `_config.yml` names), which Colab renders without
MyST markup: `icml26.colab.fix_html`.
"""

from __future__ import annotations

import os
from pathlib import Path

REMOTE_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "_static/colab-badge.svg"


def localise_badges(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if REMOTE_BADGE not in text:
            continue
        local = os.path.relpath(out / LOCAL_BADGE, page.parent).replace(os.sep, "/")
        page.write_text(text.replace(f'src="{REMOTE_BADGE}"', f'src="{local}"'), encoding="utf-8")


def point_launch_buttons_at_the_colab_edition(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from icml26.colab import fix_html

    fix_html(Path(app.outdir))


def setup(app):
    app.connect("build-finished", localise_badges)
    app.connect("build-finished", point_launch_buttons_at_the_colab_edition)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
