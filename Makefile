# ICML 2026, Runnable. `make book` and `make test` work on a fresh machine (Python >= 3.10).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CHAPTER ?=
SCALE ?= reduced
DEVICE ?= auto
SEED ?= 0
PORT ?= 8000
JOBS ?= 2
# OFFLINE=1: a book that needs no network. MathJax, require.js and the ipywidgets HTML manager
# come from local copies of pinned npm packages (book/vendor/); book/vendor/offline.py installs
# them and writes _build/offline/_config.yml (_config.yml plus the local asset paths).
OFFLINE ?= 0
BOOK_CONFIG = $(if $(filter 1,$(OFFLINE)),_build/offline/_config.yml,_config.yml)
BOOK_FLAGS = --toc book/_toc.yml --config $(BOOK_CONFIG)
OFFLINE_ASSETS = $(if $(filter 1,$(OFFLINE)),$(PY) book/vendor/offline.py)

# Portable numerics: every execution pins the CPU math libraries (ATen, MKL, oneDNN, OpenBLAS,
# numpy's SIMD loops) to their AVX2 code path and a fixed thread count, so a run on any x86-64
# machine prints what the stored run printed. The one list of settings is icml26/numerics.py;
# ICML26_NUMERICS=native lets the libraries pick their widest kernels instead.
_build/numerics.mk: src/icml26/numerics.py $(wildcard $(VENV)/.installed)
	@mkdir -p _build && $(if $(wildcard $(PY)),$(PY),$(PYTHON)) src/icml26/numerics.py > $@
include _build/numerics.mk

.PHONY: help setup book book-strict serve test unit nbval browser run chapters colab student clean evidence evidence-check \
	assignments grade-test slides

help:
	@echo "make book [OFFLINE=1]     set up .venv, build the HTML book from the stored outputs"
	@echo "make book EDITION=student the same site without exercise solutions (_build/student-book)"
	@echo "                          (OFFLINE=1: math and widgets from local copies, no network needed)"
	@echo "make serve                serve the built book on http://localhost:$(PORT)"
	@echo "make test                 set up, then unit tests, nbval, guard tests, strict offline book build,"
	@echo "                          browser and Colab-install tests (make browser)"
	@echo "make browser              strict OFFLINE=1 build, then every page in headless Chromium"
	@echo "                          (screenshots in _build/screenshots/) and the Colab install test"
	@echo "make run CHAPTER=<slug> [SCALE=reduced] [DEVICE=auto] [SEED=0]   re-execute one chapter"
	@echo "make chapters             re-execute every chapter at SCALE"
	@echo "make evidence CHAPTER=<slug> [SCALE=evidence] [DEVICE=auto]   run the evidence preset headless and"
	@echo "                          store src/icml26/<slug>/evidence/<scale>-<device>.json (its verdict)"
	@echo "make evidence-check       check every stored evidence record (fresh sources, statuses follow from figures)"
	@echo "make colab                the Colab edition: _build/colab/<slug>.ipynb, rendered right by Jupyter and Colab"
	@echo "make slides               the chapters as reveal.js slides: _build/slides/<slug>.slides.html"
	@echo "make assignments          graded exercises (otter-grader): _build/assignments/<slug>/dist/{student,autograder}"
	@echo "make grade-test           grade each chapter's blank and wrong submissions; the reference must pass every check"
	@echo "make student              the student edition (from the Colab edition): _build/student/<slug>.ipynb,"
	@echo "                          without solutions and outputs"
	@echo "make gpu-check [DEVICE=cpu] [BOX=20] [CHAPTER=a,b] [RECORDS=s]   on a CUDA GPU: device tests, every chapter"
	@echo "                          at reduced and a BOX-second slice of each full preset (_build/gpu-check.md)"

# torch is installed on its own first, from the pin in requirements.txt, so that nothing
# else can pull a multi-GB CUDA build of it.
$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$$(grep -E '^torch==' requirements.txt)"
	$(PY) -m pip install -q -r requirements.txt -e .
	touch $@

setup: $(VENV)/.installed

# EDITION=student: the same site without the exercise solutions (icml26.student --book), for a
# course that grades them; the public book keeps them, collapsed. Built online (not with OFFLINE=1).
EDITION ?= public
STUDENT_BOOK := _build/student-book
book: setup
ifeq ($(EDITION),student)
	@test "$(OFFLINE)" != 1 || { echo "make book EDITION=student builds the online book; drop OFFLINE=1"; exit 2; }
	$(PY) -m icml26.student --book $(STUDENT_BOOK)
	cd $(STUDENT_BOOK) && $(CURDIR)/$(VENV)/bin/jupyter-book build . --toc book/_toc.yml --config _config.yml
	@echo "The student edition is at $(CURDIR)/$(STUDENT_BOOK)/_build/html/index.html"
else ifeq ($(EDITION),public)
	$(OFFLINE_ASSETS)
	$(VENV)/bin/jupyter-book build . $(BOOK_FLAGS)
	@echo "The book is at $(CURDIR)/_build/html/index.html (make serve to browse it)"
else
	@echo "EDITION must be public or student, got $(EDITION)"; exit 2
endif

book-strict: setup
	rm -rf _build/html _build/.doctrees
	$(OFFLINE_ASSETS)
	$(VENV)/bin/jupyter-book build . $(BOOK_FLAGS) -W -n --keep-going

serve:
	@test -f _build/html/index.html || { echo "no built book: run make book first"; exit 1; }
	$(PY) -m http.server $(PORT) --directory _build/html

unit: setup
	TQDM_DISABLE=1 $(VENV)/bin/pytest tests -n $(JOBS) -q

nbval: setup
	TQDM_DISABLE=1 $(VENV)/bin/pytest --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	    -n $(JOBS) --dist loadfile -q chapters

# The reader-path tests (tests/browser) check the offline build, so `make test` builds it with
# OFFLINE=1: the strict build and the browser test share one build.
browser: override OFFLINE = 1
# Two workers, a test file each at a time (--dist loadfile): the Colab install test (installs and
# smoke runs) and the page checks in Chromium overlap. Old screenshots are cleared here, once.
browser: book-strict slides
	rm -f _build/screenshots/*.png
	ICML26_BROWSER=1 TQDM_DISABLE=1 $(VENV)/bin/pytest tests/browser -n $(JOBS) --dist loadfile -q -rA --durations=0

test: override OFFLINE = 1
# The Colab edition: every chapter with its MyST turned into markdown that Jupyter and Colab render,
# the install cell pinned to this commit (src/icml26/colab.py; it fails on any MyST left);
# tests/test_colab_edition.py (part of `make unit`) checks it, rendered by nbconvert too.
colab: setup
	$(PY) -m icml26.colab --out _build/colab

# The student edition, from the Colab edition: no solutions and no outputs (src/icml26/student.py);
# tests/test_student.py (part of `make unit`) checks it and runs each notebook at SCALE=smoke.
student: colab
	$(PY) -m icml26.student --from _build/colab --out _build/student

# Graded exercises (assignments/<slug>.py, src/icml26/grading.py): `make assignments` writes each
# chapter's otter-grader student notebook and autograder under _build/assignments/<slug>/dist/;
# `make grade-test` scores each question's reference (full marks), blank (0) and wrong answer (must
# lose marks) with otter's test files in one execution per chapter; OTTER=1 grades three whole
# submissions per chapter with `otter run` instead.
assignments: setup
	$(PY) -m icml26.grading assign

grade-test: setup
	TQDM_DISABLE=1 $(PY) -m icml26.grading test --jobs $(JOBS) $(if $(OTTER),--otter)

# Slides from the chapters (their slide tags; src/icml26/slides.py): _build/slides/<slug>.slides.html,
# reveal.js through nbconvert, rendered from the Colab edition, with local reveal.js and MathJax.
slides: colab
	$(PY) -m icml26.slides

test: unit nbval colab student slides grade-test book-strict browser
	@echo "make test: all checks passed"

# Evidence records (CONTRIBUTING.md, section 4): the chapter's `evidence` preset, headless, through
# run_experiment and build_ledger, stored as src/icml26/<slug>/evidence/<scale>-<device>.json.
evidence: SCALE = evidence
evidence: setup
	@test -n "$(CHAPTER)" || { echo "usage: make evidence CHAPTER=<slug> [SCALE=evidence|full] [DEVICE=auto]"; exit 2; }
	TQDM_DISABLE=1 $(PY) -m icml26.evidence run $(CHAPTER) --scale $(SCALE) --device $(DEVICE)

evidence-check: setup
	$(PY) -m icml26.evidence check

run: setup
	@test -n "$(CHAPTER)" || { echo "usage: make run CHAPTER=<slug> [SCALE=reduced] [DEVICE=auto] [SEED=0]"; exit 2; }
	$(PY) -m icml26.runner $(CHAPTER) --scale $(SCALE) --device $(DEVICE) --seed $(SEED)

chapters: setup
	$(PY) -m icml26.runner --all --scale $(SCALE) --device $(DEVICE) --seed $(SEED)

# One command for a machine with a CUDA GPU (about 8 minutes on one modern GPU): the unit tests that
# take the `device` fixture, on the GPU; every chapter at `reduced` on the GPU, executed into
# _build/gpu-check/ (the stored notebooks are only read), with wall time, peak GPU memory and the ledger
# statuses next to the stored CPU ones; a BOX-second slice of each `full` preset (loop rate, peak
# memory, projected full time). Writes _build/gpu-check.json and _build/gpu-check.md. Without a GPU
# it says so and exits 2; DEVICE=cpu runs the same harness on the CPU (BOX defaults to 2 there).
# It needs no `make setup` and no network: it uses .venv when there is one, else python3 (a bare GPU
# machine's CUDA torch). Such a machine (device README: torch and the scientific stack, no Jupyter)
# lacks ipython, ipywidgets and their pure-Python needs, wittgenstein, highspy and diffusers: carry them
# as wheels in .whl/; `python3 src/icml26/gpucheck.py --print-carry` prints the download and install lines.
# RECORDS=<seconds> then runs `full` presets headless, shortest projected first, and stores each finished
# one as src/icml26/<slug>/evidence/full-cuda.json (copy them back from a lent machine's $OUT).
.PHONY: gpu-check
gpu-check:
	@py=$$(test -x $(PY) && echo $(PY) || echo $(PYTHON)); \
	PYTHONPATH=$(CURDIR)/src$${PYTHONPATH:+:$$PYTHONPATH} $$py -m icml26.gpucheck --device $(DEVICE) \
	    $(if $(BOX),--box $(BOX)) $(if $(CHAPTER),--chapters $(CHAPTER)) $(if $(RECORDS),--records $(RECORDS))

clean:
	rm -rf _build
