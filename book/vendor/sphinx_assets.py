"""Sphinx extension: fixes to the scripts of every HTML page, found by the browser test.

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


# 3. Accessibility fixes that axe-core (tests/browser) asks for, on parts of the page that neither
# the notebooks nor this book write: the theme's buttons and links have aria-labels that do not
# contain their visible text (axe: label-content-name-mismatch); images that saved widgets render have no alt text; slider handles
# of ipywidgets have no accessible name; scrolling output blocks cannot be reached by keyboard.
ACCESSIBILITY_FIXES = """
(function () {
  function fix(root) {
    root.querySelectorAll('a[aria-label] i, button[aria-label] i, a[aria-label] svg, button[aria-label] svg')
      .forEach(function (icon) { icon.setAttribute('aria-hidden', 'true'); });  // icon glyphs are not text
    root.querySelectorAll('.theme-switch-button[aria-label]').forEach(function (b) {
      b.setAttribute('title', b.getAttribute('aria-label'));  // an icon-only button: its name from its title
      b.removeAttribute('aria-label');
    });
    root.querySelectorAll('a[aria-label], button[aria-label]').forEach(function (el) {
      var text = (el.innerText || '').trim();
      var label = el.getAttribute('aria-label');
      if (text && label.toLowerCase().indexOf(text.toLowerCase()) < 0) el.setAttribute('aria-label', text + ': ' + label);
    });
    root.querySelectorAll('summary[aria-label]').forEach(function (s) {
      s.removeAttribute('aria-label');  // a hidden cell's toggle: its visible words are its name
    });
    root.querySelectorAll('summary').forEach(function (s) {
      if ((s.innerText || '').trim() || s.hasAttribute('aria-label')) return;
      var entry = s.closest('li');  // the sidebar's toggle of a page's sections: an icon only
      var link = entry && entry.querySelector('a');
      s.setAttribute('aria-label', 'Show the sections of ' + (link ? link.textContent.trim() : 'this entry'));
    });
    root.querySelectorAll('.citation-list[role="list"]').forEach(function (list) {
      list.removeAttribute('role');  // its entries are not list items: a plain block, not a list
    });
    root.querySelectorAll('img:not([alt])').forEach(function (img) {
      img.setAttribute('alt', 'Figure drawn by the interactive control above');
    });
    root.querySelectorAll('.noUi-handle:not([aria-label])').forEach(function (h) {
      var box = h.closest('.widget-slider, .widget-hslider, .jupyter-widgets');
      var label = box && box.querySelector('label');
      h.setAttribute('aria-label', (label && label.textContent.trim()) || 'slider');
    });
    root.querySelectorAll('pre, .output_area, .cell_output').forEach(function (el) {
      if (el.scrollWidth > el.clientWidth && !el.hasAttribute('tabindex')) el.setAttribute('tabindex', '0');
    });
  }
  document.addEventListener('DOMContentLoaded', function () {
    fix(document);
    new MutationObserver(function () { fix(document); })
      .observe(document.body, {childList: true, subtree: true});
  });
})();
""".strip()


def setup(app):
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.add_js_file(None, body=MATHJAX2_HUB_SHIM)
    app.add_js_file(None, body=ACCESSIBILITY_FIXES)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
