"""Layout checks a reader meets at a given width (tests/browser/test_layout.py):

- the page itself must not scroll sideways (an unbreakable line of text or inline code);
- a display equation or code block wider than its box must show that it scrolls (the book's
  scroll shadows: a `local` gradient background); at 1280 px no display equation may overflow;
- no word in a table cell is broken across lines, except after a hyphen or dash inside a word
  or name (a number such as 5e-4 or -0.05 must stay whole);
- every image a cell output stores (not a widget's live view) has alt text that describes it (not
  empty, not a file path) and a caption (a figure caption around it); chapters whose captions are
  still to be written are listed in test_layout.CAPTIONS_PENDING and checked for everything else.
"""
from __future__ import annotations

COLLECT = r"""
(width) => {
  const out = {overflow: [], broken: [], images: [], sideways: null};
  // Text of the article that reaches past the window without a scrolling box around it (an
  // unbreakable line of text or inline code) makes the whole page scroll sideways.
  const W = document.documentElement.clientWidth;
  for (const el of document.querySelectorAll('.bd-article *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1) continue;
    let p = el.parentElement, clipped = false;
    for (; p; p = p.parentElement) if (/(auto|scroll|hidden|clip)/.test(getComputedStyle(p).overflowX)) { clipped = true; break; }
    if (!clipped && (!out.sideways || r.right - W > out.sideways.by))
      out.sideways = {by: Math.round(r.right - W), text: el.textContent.trim().slice(0, 60)};
  }
  const where = (el) => { const c = el.closest('.cell'); const s = el.closest('section[id]');
    return c ? `cell #${[...document.querySelectorAll('.cell')].indexOf(c)}` : (s ? `#${s.id}` : 'page'); };
  const boxes = [...document.querySelectorAll('.bd-article div.math, .bd-article mjx-container[display="true"], .bd-article div.highlight pre')];
  for (const el of boxes) {
    if (el.scrollWidth <= el.clientWidth + 1) continue;
    const style = getComputedStyle(el);
    const cue = /gradient/.test(style.backgroundImage) && /local/.test(style.backgroundAttachment)
      && /auto|scroll/.test(style.overflowX);
    const isMath = !el.matches('pre');
    out.overflow.push({kind: isMath ? 'display equation' : 'code block', cue,
                       by: el.scrollWidth - el.clientWidth, where: where(el),
                       text: el.textContent.trim().slice(0, 50)});
  }
  for (const td of document.querySelectorAll('.bd-article td, .bd-article th')) {
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /\S+/g; let m;
      while ((m = re.exec(node.data))) {
        const word = m[0];
        if (word.length < 2 || !/[A-Za-z0-9]/.test(word)) continue;  // an arrow or a dash is not a word
        let firstTop = null, breakAt = -1;
        for (let i = 0; i < word.length; i++) {
          const r = document.createRange(); r.setStart(node, m.index + i); r.setEnd(node, m.index + i + 1);
          const rect = [...r.getClientRects()].find((x) => x.width > 0);
          if (!rect) continue;
          if (firstTop === null) firstTop = Math.round(rect.top);
          else if (Math.round(rect.top) > firstTop + 2) { breakAt = i; break; }
        }
        if (breakAt < 0) continue;
        const before = word[breakAt - 1] || '', prior = word[breakAt - 2] || '', next = word[breakAt] || '';
        // A hyphenated word (or name: TA-116K, Bias–Variance) may break after its hyphen or dash; a
        // number (5e-4, -0.05, 1-1.5) never.
        const isNumber = /^[-+(\[]?\d[\d.,]*(?:[eE][-+]?\d+)?(?:[-\u2013]\d[\d.,]*)?[)\],;:%]*$/.test(word);
        const atHyphen = !isNumber && /[-\/\u2013\u2014]/.test(before) && /[\w)]/.test(prior) && /[A-Za-z0-9]/.test(next);
        if (!atHyphen) out.broken.push({word, where: where(td)});
      }
    }
  }
  for (const img of document.querySelectorAll('.bd-article img')) {
    if (!img.closest('.cell_output, .output, figure')) continue;
    // Explore's live view is drawn by a widget (its frames come from the widget state); the
    // static Explore panel (icml26.common.explorer) stores plain images, checked here with the rest.
    if (img.closest('.widget-subarea, .jupyter-widgets, .lm-Widget')) continue;
    const alt = (img.getAttribute('alt') || '').trim();
    const fig = img.closest('figure');
    const caption = fig && fig.querySelector('figcaption') ? fig.querySelector('figcaption').innerText.trim() : '';
    out.images.push({src: (img.getAttribute('src') || '').slice(0, 80), alt, caption, where: where(img)});
  }
  return out;
}
"""

PATH_LIKE = (".png", ".svg", ".jpg", ".jpeg", ".gif", "/", "\\")


def _path_like(alt: str) -> bool:
    """A file name, path or URL given as alt text (a sentence that mentions "W/O" or "linear/w7" is not)."""
    text = alt.strip().lower()
    return (text.endswith(PATH_LIKE) or text.startswith(("_images", "http", "../", "./", "/"))
            or (" " not in text and ("/" in text or "\\" in text)))


def layout_problems(page, width: int, captions: bool = True) -> list[str]:
    """The layout problems of the page open in `page` at this viewport width (`captions=False`:
    all but the figures' alt text and captions)."""
    facts = page.evaluate(COLLECT, width)
    problems = []
    for box in facts["overflow"]:
        label = f"{box['kind']} at {box['where']} ({box['text']!r}) overflows by {box['by']} px"
        if not box["cue"]:
            problems.append(f"{label} with no visible scroll cue")
        elif width >= 1280 and box["kind"] == "display equation":
            problems.append(f"{label} at {width} px: break it into aligned lines")
    if facts["sideways"]:
        problems.append(f"the page scrolls sideways: {facts['sideways']['text']!r} reaches {facts['sideways']['by']} px "
                        "past the window")
    for item in facts["broken"]:
        problems.append(f"table cell at {item['where']}: the word {item['word']!r} breaks across lines")
    for img in facts["images"] if captions else []:
        alt = img["alt"]
        if not alt or _path_like(alt):
            problems.append(f"image {img['src']} at {img['where']}: alt text {alt!r} does not describe it")
        if not img["caption"]:
            problems.append(f"image {img['src']} at {img['where']}: no caption")
    return problems
