"""The chapters define each glossary term where they first use it, with a {term} role (icml26.glossary)."""

import pytest

from icml26 import glossary
from icml26.catalog import SLUGS

ENTRIES = glossary.load_glossary()


@pytest.mark.parametrize("slug", SLUGS)
def test_each_chapter_defines_its_glossary_terms_at_their_first_use(slug):
    assert glossary.problems(slug, glossary.chapter_cells(slug), ENTRIES) == []


def test_every_glossary_entry_names_real_chapters():
    assert ENTRIES and all(set(e.chapters) <= set(SLUGS) for e in ENTRIES)


# A made-up glossary and chapter: each rule fails on the text that breaks it.
PAGE = """# Glossary

```{glossary}
alcove
  A fundamental region, $\\pi_W$ maps onto it. Used in: {doc}`../chapters/toy`.

MUPE (Mutual-Understanding Position Encoding)
  A position correction. Used in: {doc}`../chapters/toy`, {doc}`../chapters/other`.
```
"""
TOY = glossary.read_glossary(PAGE)
GOOD = [
    "# Title with MUPE and an alcove\n\n**Source basis:** official code.\n\n"
    "The block adds {term}`MUPE <MUPE (Mutual-Understanding Position Encoding)>` (Mutual-Understanding "
    "Position Encoding), a position correction, and folds the plane onto the {term}`alcove`, the region "
    "that meets every orbit once.",
    "Later the MUPE and the alcoves come back, in `code MUPE` and $\\mathrm{MUPE}$.\n\n| MUPE | table |",
]


def test_the_glossary_page_is_read_from_its_glossary_directive():
    assert [e.term for e in TOY] == ["alcove", "MUPE (Mutual-Understanding Position Encoding)"]
    assert TOY[1].chapters == ("toy", "other") and TOY[1].head == "MUPE"
    assert TOY[1].expansion == "Mutual-Understanding Position Encoding" and TOY[0].expansion is None
    assert "$\\pi_W$" in TOY[0].definition
    with pytest.raises(ValueError, match="no .glossary. directive"):
        glossary.read_glossary("alcove\n: a definition list\n")


def test_a_chapter_that_marks_its_first_uses_passes():
    assert glossary.problems("toy", GOOD, TOY) == []


def test_a_use_before_the_first_term_role_fails():
    broken = ["The MUPE is added before anything is defined.\n\n" + GOOD[0], GOOD[1]]
    found = glossary.problems("toy", broken, TOY)
    assert found == ["toy: cell 0 uses 'MUPE' before the first {term} role for "
                     "'MUPE (Mutual-Understanding Position Encoding)'"]
    plural = ["Two alcoves first.\n\n" + GOOD[0]]
    assert "uses 'alcoves' before" in " ".join(glossary.problems("toy", plural, TOY))


def test_a_term_without_a_role_or_an_unknown_target_fails():
    unmarked = [GOOD[0].replace("{term}`alcove`", "alcove")]
    assert glossary.problems("toy", unmarked, TOY) == [
        "toy: no {term} role for 'alcove', which the glossary says the chapter uses (first used in cell 0: 'alcove')"]
    unknown = [GOOD[0] + " See {term}`MUPE <MUPE>`."]
    assert "the {term} target 'MUPE' is not a term of the glossary" in " ".join(glossary.problems("toy", unknown, TOY))


def test_an_acronym_must_be_spelled_out_where_it_is_first_marked():
    terse = [GOOD[0].replace("(Mutual-Understanding Position Encoding), ", "")]
    assert "does not spell out 'Mutual-Understanding Position Encoding'" in " ".join(
        glossary.problems("toy", terse, TOY))


def test_headings_code_math_tables_and_run_in_headings_are_not_prose():
    text = ("## MUPE\n**MUPE.** The {term}`x <MUPE>` text `MUPE` $MUPE$ [MUPE](https://e.x/MUPE)\n"
            "| MUPE |\n```python\nMUPE = 1\n```\n```{admonition} Solution\n:class: dropdown\nMUPE here\n```")
    kept = glossary.prose(text)
    assert len(kept) == len(text)
    assert [" ".join(line.split()) for line in kept.split("\n")] == [
        "", "The {term}`x <MUPE>` text [MUPE]", "", "", "", "", "", "", "MUPE here", ""]


def test_the_forms_of_a_term():
    forms = {e.term: e for e in glossary.load_glossary()}
    mip, rep = forms["MIP (mixed-integer program)"], forms["REPRODUCED"]
    assert mip.pattern().search("two MIPs") and not mip.pattern().search("MIPS")
    assert rep.pattern().search("is REPRODUCED") and not rep.pattern().search("NOT REPRODUCED")
    assert forms["SE(3) (special Euclidean group)"].pattern().search("SE(3) poses")
    assert not forms["SE(3) (special Euclidean group)"].pattern().search("EIG-SE(3)")
    assert forms["MoE (mixture of experts)"].pattern().search("a mixture-of-experts layer")
