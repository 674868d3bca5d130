"""What a reader sees: open a built page in headless Chromium and list what is wrong with it.

Used by test_pages.py (every page of the offline build) and test_pagecheck.py (the checker on
deliberately broken pages). Every problem is one line naming the page and the element:
    "chapters/dq_sync: img[src=../_images/x.png] (cell #6): image did not load (naturalWidth 0)"

The browser is Debian's Chromium, driven by Playwright with `executable_path` (no browser is
downloaded). Requests leaving the local server are aborted and recorded, so a page that needs
the network for a script, style sheet or font fails even on a machine that has one.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = os.environ.get("ICML26_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# Kinds of request a page may not send to the network; images are judged by the img check.
NEEDS_NETWORK = {"script", "stylesheet", "font", "xhr", "fetch", "document", "media"}
RENDER_TIMEOUT_MS = 30_000
# An image may be drawn at most this many times wider than it is shown (CONTRIBUTING.md, section 3).
MAX_DOWNSCALE = 2.5
# axe-core (npm, pinned in book/vendor/package.json, installed by book/vendor/offline.py).
AXE_JS = Path(os.environ.get("ICML26_AXE_JS", Path(__file__).resolve().parents[2] / "_build" / "offline" / "npm"
                             / "node_modules" / "axe-core" / "axe.min.js"))
AXE_FAILING_IMPACTS = ("serious", "critical")


def launch(playwright, profile_dir: Path):
    """A headless Chromium with a fresh profile (`--user-data-dir`) in `profile_dir`."""
    return playwright.chromium.launch_persistent_context(
        str(profile_dir),
        executable_path=CHROMIUM,
        headless=True,  # Playwright adds --headless
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
        service_workers="block",
    )


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


class StaticServer:
    """Serve a folder on 127.0.0.1 (an ephemeral port) from a background thread."""

    def __init__(self, root: Path):
        handler = functools.partial(QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "StaticServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class ChapterExpectation:
    """What a chapter page must show: its stored verdict and its Colab notebook URL."""

    verdict: str | None
    colab_url: str


@dataclass
class PageResult:
    name: str
    problems: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    screenshot: Path | None = None


# One pass over the DOM once the page has settled; everything the checks need.
_COLLECT = r"""
() => {
  const cells = Array.from(document.querySelectorAll('.cell'));
  const where = (el) => {
    const cell = el.closest('.cell');
    if (cell) return ` (cell #${cells.indexOf(cell)})`;
    const section = el.closest('section[id]');
    return section ? ` (section #${section.id})` : '';
  };
  const images = Array.from(document.images).map((img) => ({
    src: img.getAttribute('src') || '', url: img.currentSrc || img.src, alt: img.alt,
    complete: img.complete, width: img.naturalWidth, height: img.naturalHeight,
    output: !!img.closest('.cell_output, .output, figure, .widget-subarea'), where: where(img),
    shown: img.getBoundingClientRect().width,
  }));
  const mathNodes = Array.from(document.querySelectorAll('.math, .output.text_latex'));
  const math = mathNodes.map((el) => ({
    typeset: !!el.querySelector('mjx-container') || el.tagName.toLowerCase() === 'mjx-container',
    text: el.textContent.trim().slice(0, 60), where: where(el),
  }));
  // Raw TeX left in the visible text (outside code, scripts and typeset math).
  const raw = [], rawTables = [], strays = [];
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight, .MathJax_Preview';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    const trimmed = text.trim();
    if (/\\\[|\\\(|\$\$|\\begin\{/.test(text)) {
      raw.push({text: trimmed.slice(0, 80), where: where(parent)});
    } else if (!parent.closest('.math') && /\$|\\[A-Za-z]+/.test(text)) {
      strays.push({text: trimmed.slice(0, 80), where: where(parent)});
    }
    // a raw row has at least two cells (three bars); |x| alone is an absolute value
    if (trimmed.startsWith('|') && trimmed.endsWith('|') && (trimmed.match(/\|/g) || []).length >= 3) {
      rawTables.push({text: trimmed.slice(0, 80), where: where(parent)});
    }
  }
  const mathErrors = Array.from(document.querySelectorAll('mjx-merror, [data-mjx-error]')).map((el) => ({
    text: (el.getAttribute('data-mjx-error') || el.textContent || '').trim().slice(0, 80), where: where(el),
  }));
  const column = document.querySelector('.bd-article') || document.querySelector('main') || document.body;
  const overflow = {column: column.scrollWidth - column.clientWidth,
                    page: document.documentElement.scrollWidth - window.innerWidth};
  const stateModels = new Set();
  const states = Array.from(document.querySelectorAll(`script[type="${'WIDGET_STATE'}"]`));
  for (const tag of states) {
    try { Object.keys(JSON.parse(tag.textContent).state || {}).forEach((k) => stateModels.add(k)); }
    catch (e) { /* an unreadable state counts as none */ }
  }
  const views = Array.from(document.querySelectorAll(`script[type="${'WIDGET_VIEW'}"]`)).map((tag) => {
    let model = null;
    try { model = JSON.parse(tag.textContent).model_id; } catch (e) { /* reported as missing */ }
    const area = tag.previousElementSibling;
    const rendered = !!(area && area.classList.contains('widget-subarea')
      && area.querySelector('.jupyter-widgets, .lm-Widget, .widget-inline-hbox, .widget-box'));
    return {model, inState: stateModels.has(model), rendered, where: where(tag)};
  });
  const colab = Array.from(document.querySelectorAll('a[href*="colab.research.google.com"]')).map((a) => ({
    href: a.getAttribute('href'), launch: (a.getAttribute('title') || '').includes('Colab')
      || !!a.closest('.dropdown-launch-buttons'), where: where(a),
    text: (a.textContent || a.querySelector('img')?.alt || '').trim(),
  }));
  const verdicts = [];
  for (const out of document.querySelectorAll('.cell_output')) {
    for (const m of out.innerText.matchAll(/^Verdict: (.+)$/gm)) verdicts.push({verdict: m[1].trim(), where: where(out)});
  }
  const scoreboard = Array.from(document.querySelectorAll('table.scoreboard tbody tr:not(.scoreboard-total)')).map((tr) => ({
    cells: Array.from(tr.children).map((td) => td.innerText.trim()),
    links: Array.from(tr.querySelectorAll('a[href]')).map((a) => a.getAttribute('href')),
  }));
  return {
    images, math, raw, rawTables, strays, mathErrors, overflow, views, states: states.length, colab, verdicts, scoreboard,
    mjx: document.querySelectorAll('mjx-container').length,
    mathjax: !!(window.MathJax && window.MathJax.startup && window.MathJax.version),
  };
}
""".replace("'WIDGET_STATE'", repr(WIDGET_STATE)).replace("'WIDGET_VIEW'", repr(WIDGET_VIEW))

_MATHJAX_READY = """
async () => {
  if (!(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)) return false;
  await window.MathJax.startup.promise;
  return true;
}
"""

# Every widget view whose model is in the saved state has been rendered.
_WIDGETS_READY = r"""
() => {
  const ids = new Set();
  for (const tag of document.querySelectorAll(`script[type="${'WIDGET_STATE'}"]`)) {
    try { Object.keys(JSON.parse(tag.textContent).state || {}).forEach((k) => ids.add(k)); } catch (e) {}
  }
  return Array.from(document.querySelectorAll(`script[type="${'WIDGET_VIEW'}"]`)).every((tag) => {
    let id = null;
    try { id = JSON.parse(tag.textContent).model_id; } catch (e) { return true; }
    if (!ids.has(id)) return true;
    const area = tag.previousElementSibling;
    return !!(area && area.classList.contains('widget-subarea') && area.children.length);
  });
}
""".replace("'WIDGET_STATE'", repr(WIDGET_STATE)).replace("'WIDGET_VIEW'", repr(WIDGET_VIEW))

_IMAGES_SETTLED = "() => Array.from(document.images).every((img) => img.complete)"

_AXE_RUN = """
async (impacts) => {
  // The theme's icon-only colour-mode button is named by the page script (book/vendor/sphinx_assets.py);
  // axe still reads its icon glyphs as visible text, so that one element is left out of this rule.
  const result = await window.axe.run(document, {resultTypes: ['violations'],
    rules: {}, }).then((r) => ({violations: r.violations.map((v) => v.id !== 'label-content-name-mismatch' ? v
      : {...v, nodes: v.nodes.filter((n) => !(n.target || []).join(' ').includes('theme-switch-button'))})
      .filter((v) => v.nodes.length)}));
  return result.violations.filter((v) => impacts.includes(v.impact)).map((v) => ({
    id: v.id, impact: v.impact, count: v.nodes.length, help: v.help,
    target: (v.nodes[0] && v.nodes[0].target || []).join(' ').slice(0, 100)}));
}
"""


def _short(url: str, base: str) -> str:
    return url[len(base):] if url.startswith(base) else url


def check_page(
    context,
    base_url: str,
    name: str,
    path: str,
    *,
    chapter: ChapterExpectation | None = None,
    scoreboard: dict[str, tuple[str, str | None]] | None = None,
    screenshot: Path | None = None,
    accessibility: bool = True,
) -> PageResult:
    """Open `base_url + path` and return the page's problems (empty when the page is right).

    chapter: the verdict and Colab URL a chapter page must show.
    scoreboard: paper title -> (verdict its row must show, page it links to or None).
    accessibility: run axe-core and report its serious and critical violations.
    """
    result = PageResult(name)
    problem = result.problems.append
    page = context.new_page()
    js_errors: list[str] = []
    network: list[tuple[str, str]] = []
    failed: list[tuple[str, str, str]] = []

    def route(route_):
        request = route_.request
        if request.url.startswith(base_url):
            route_.continue_()
        else:
            network.append((request.url, request.resource_type))
            route_.abort("internetdisconnected")

    page.route("**/*", route)
    page.on("pageerror", lambda exc: js_errors.append(f"uncaught {exc.name}: {exc.message}".strip()))
    page.on(
        "console",
        lambda msg: msg.type == "error"
        and not msg.text.startswith("Failed to load resource")  # judged by the request checks
        and js_errors.append(f"console error: {msg.text}"),
    )
    page.on(
        "requestfailed",
        lambda req: req.url.startswith(base_url)
        and failed.append((req.url, req.resource_type, req.failure or "failed")),
    )
    page.on(
        "response",
        lambda resp: resp.status >= 400 and failed.append((resp.url, resp.request.resource_type, f"HTTP {resp.status}")),
    )
    try:
        response = page.goto(base_url + path, wait_until="load", timeout=RENDER_TIMEOUT_MS)
        if response is None or not response.ok:
            problem(f"{name}: page: HTTP {response.status if response else 'no response'}")
            return result
        try:
            page.wait_for_load_state("networkidle", timeout=RENDER_TIMEOUT_MS)
        except Exception:  # a page that keeps polling is still checked
            pass
        typeset = page.evaluate(_MATHJAX_READY)
        try:
            page.wait_for_function(_WIDGETS_READY, timeout=RENDER_TIMEOUT_MS)
        except Exception:  # reported below, view by view
            pass
        try:
            page.wait_for_function(_IMAGES_SETTLED, timeout=RENDER_TIMEOUT_MS)
        except Exception:
            pass
        facts = page.evaluate(_COLLECT)
        facts["axe"] = None
        if accessibility:
            if not AXE_JS.is_file():
                problem(f"{name}: axe-core: not installed at {AXE_JS} (make book OFFLINE=1 installs it)")
            else:
                page.add_script_tag(path=str(AXE_JS))
                facts["axe"] = page.evaluate(_AXE_RUN, list(AXE_FAILING_IMPACTS))
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
            result.screenshot = screenshot
    finally:
        page.close()

    result.facts = {
        "images": len(facts["images"]),
        "math": len(facts["math"]),
        "mathjax_containers": facts["mjx"],
        "widget_views": len(facts["views"]),
        "colab_links": len(facts["colab"]),
    }
    # JavaScript
    for message in js_errors:
        problem(f"{name}: javascript: {message}")
    # Requests: nothing local may fail; nothing but images may come from the network.
    for url, kind, why in failed:
        problem(f"{name}: {kind} {_short(url, base_url)}: request failed ({why})")
    for url, kind in network:
        if kind in NEEDS_NETWORK:
            problem(f"{name}: {kind} {url}: needs the network (the offline book must not)")
    # Figures: every image in an output or figure, and every local image, has loaded.
    for img in facts["images"]:
        local = img["url"].startswith(base_url) or img["url"].startswith("data:")
        label = f"img[src={img['src'][:200]}]{img['where']}"
        if img["output"] and not local:
            problem(f"{name}: {label}: figure image is fetched from the network")
        elif not img["complete"] or img["width"] == 0:
            problem(f"{name}: {label}: image did not load (naturalWidth 0)")
        elif img["shown"] > 0 and img["width"] > MAX_DOWNSCALE * img["shown"]:
            problem(f"{name}: {label}: drawn {img['width']} px wide, shown at {img['shown']:.0f} px "
                    f"(more than {MAX_DOWNSCALE}x smaller: its text is unreadable)")
    # Math: MathJax ran where the page has math, and no raw TeX is left.
    if facts["math"]:
        if not (typeset and facts["mathjax"]):
            problem(f"{name}: MathJax: not loaded, {len(facts['math'])} math element(s) left as raw TeX")
        else:
            for item in facts["math"]:
                if not item["typeset"]:
                    problem(f"{name}: math {item['text']!r}{item['where']}: not typeset")
    for item in facts["raw"]:
        problem(f"{name}: text {item['text']!r}{item['where']}: raw TeX left on the page")
    for item in facts["strays"]:
        problem(f"{name}: text {item['text']!r}{item['where']}: a $ or TeX command outside typeset math")
    for item in facts["mathErrors"]:
        problem(f"{name}: math error {item['text']!r}{item['where']}: MathJax could not typeset it")
    for item in facts["rawTables"]:
        problem(f"{name}: text {item['text']!r}{item['where']}: a table row left as raw text")
    # Layout: nothing pushes the main column (or the page) wider than the window.
    for where, extra in facts["overflow"].items():
        if extra > 1:
            problem(f"{name}: layout: the {where} overflows horizontally by {extra} px")
    # Accessibility.
    for v in facts.get("axe") or []:
        problem(f"{name}: axe {v['impact']} {v['id']} ({v['count']}x, e.g. {v['target']}): {v['help']}")
    # Widgets: every saved view has saved state and rendered as a widget.
    for view in facts["views"]:
        label = f"widget view model_id={view['model']}{view['where']}"
        if not view["inState"]:
            problem(f"{name}: {label}: no saved widget state for this model (re-run the notebook to store it)")
        elif not view["rendered"]:
            problem(f"{name}: {label}: did not render as a widget")
    if chapter is not None:
        _check_chapter(name, facts, chapter, problem)
    if scoreboard is not None:
        _check_scoreboard(name, facts, scoreboard, problem)
    return result


def _check_chapter(name: str, facts: dict, chapter: ChapterExpectation, problem) -> None:
    verdicts = facts["verdicts"]
    if not verdicts:
        problem(f"{name}: verdict block: no 'Verdict:' line in any cell output")
    elif len(verdicts) > 1:
        problem(f"{name}: verdict block: {len(verdicts)} 'Verdict:' lines, expected one")
    elif chapter.verdict is not None and verdicts[0]["verdict"].split(" (")[0] != chapter.verdict:
        problem(
            f"{name}: verdict block{verdicts[0]['where']}: shows {verdicts[0]['verdict']!r}, "
            f"the notebook stores {chapter.verdict!r}"
        )
    launch = [link for link in facts["colab"] if link["launch"]]
    if not launch:
        problem(f"{name}: Colab launch button: missing")
    for link in facts["colab"]:
        if link["href"] != chapter.colab_url:
            kind = "Colab launch button" if link["launch"] else f"Colab link {link['text']!r}{link['where']}"
            problem(f"{name}: {kind}: points at {link['href']}, expected {chapter.colab_url}")


def _check_scoreboard(name: str, facts: dict, expected: dict[str, tuple[str, str | None]], problem) -> None:
    """expected: paper title -> (verdict shown, page the title links to or None)."""
    rows = {row["cells"][0]: row for row in facts["scoreboard"] if row["cells"]}
    if not rows:
        problem(f"{name}: table.scoreboard: missing or empty")
        return
    for title, (verdict, link) in expected.items():
        row = rows.get(title)
        if row is None:
            problem(f"{name}: scoreboard row {title!r}: missing")
            continue
        shown = row["cells"][3] if len(row["cells"]) >= 4 else None
        if shown != verdict:
            problem(f"{name}: scoreboard row {title!r}: verdict shows {shown!r}, expected {verdict!r}")
        if link is not None and not any(href.split("#")[0].endswith(link) for href in row["links"]):
            problem(f"{name}: scoreboard row {title!r}: does not link to {link}")
    for title in rows.keys() - expected.keys():
        problem(f"{name}: scoreboard row {title!r}: not a paper of icml26.catalog")


def page_name(html_path: str) -> str:
    """'chapters/dq_sync.html' -> 'chapters/dq_sync' (the name used in problems and screenshots)."""
    return re.sub(r"\.html$", "", html_path)
