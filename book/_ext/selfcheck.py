"""Sphinx extension: the `{self-check} predict|review` directive.

It renders a chapter's self-check (`icml26/common/selfchecks/<slug>.yml`, the slug from the page's name) as
static HTML whose few lines of JavaScript check an answer in the browser, so the quiz works on the
published page without a kernel (icml26.common.selfcheck.quiz_html). The Colab edition turns the
same directive into a code cell that shows the quiz (icml26.colab).
"""
from __future__ import annotations

from pathlib import PurePosixPath

from docutils import nodes
from docutils.parsers.rst import Directive

from icml26.common.selfcheck import PARTS, quiz_html


class SelfCheckDirective(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        part = self.arguments[0].strip()
        if part not in PARTS:
            raise self.error(f"{{self-check}} takes one of {', '.join(PARTS)}, not {part!r}")
        slug = PurePosixPath(self.state.document.settings.env.docname).name
        try:
            markup = quiz_html(slug, part)
        except (FileNotFoundError, ValueError) as error:
            raise self.error(str(error)) from None
        return [nodes.raw("", markup, format="html")]


def setup(app):
    app.add_directive("self-check", SelfCheckDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
