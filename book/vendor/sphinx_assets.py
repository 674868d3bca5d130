"""Sphinx extension: two fixes to the scripts of every HTML page, found by the browser test.

1. Drop duplicate <script> tags.
With Sphinx 7.4, a body-only script added through `app.add_js_file(None, body=...)` after the
builder started (sphinx-thebe's `const THEBE_JS_URL = ...`) is emitted twice: once as
filename None, once as filename '' when the registry's assets are re-added. The second copy
throws "SyntaxError: Identifier 'THEBE_JS_URL' has already been declared" on every page, which
the browser test (tests/browser) rightly reports. This keeps the first of any two script
entries that are identical apart from None/''.

2. Let saved ipywidgets typeset their labels with MathJax 3. The widget manager (the ipywidgets 8
HTML manager, online and offline) calls the MathJax 2 API `MathJax.Hub.Queue(["Typeset", ...])`
whenever window.MathJax exists; the book loads MathJax 3, which has no `Hub`, so each labelled
widget throws "Cannot read properties of undefined (reading 'Queue')". A small shim maps that
call onto MathJax 3's `typesetPromise`.
"""

from __future__ import annotations


def _key(script) -> tuple:
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, kept = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


MATHJAX2_HUB_SHIM = """
document.addEventListener("DOMContentLoaded", function () {
  var mj = window.MathJax;
  if (!mj || !mj.version || mj.Hub) return;
  mj.Hub = {Queue: function () {
    for (var i = 0; i < arguments.length; i++) {
      var job = arguments[i];
      if (Array.isArray(job) && job[0] === "Typeset" && mj.typesetPromise) {
        var el = job[2];
        mj.startup.promise.then(function () { return mj.typesetPromise(el ? [el] : undefined); })
          .catch(function (err) { console.warn("MathJax typeset of a widget failed", err); });
      } else if (typeof job === "function") { job(); }
    }
  }};
});
""".strip()


def setup(app):
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.add_js_file(None, body=MATHJAX2_HUB_SHIM)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
