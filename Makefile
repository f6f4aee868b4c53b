PY ?= .venv/bin/python
export SDL_VIDEODRIVER ?= dummy
export SDL_AUDIODRIVER ?= dummy

.PHONY: setup ray test test-fast lint bench evaluate docs docs-tables screenshots

setup:  ## fresh venv with every extra (torch pinned to the CPU build)
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e ".[train,gui,web,pettingzoo,export,ray,docs,dev]"

ray:  ## add the Ray backend, Tune and RLlib's dependencies to an existing venv
	$(PY) -m pip install -q -c constraints.txt -e ".[ray]"

test:  ## the whole test suite
	$(PY) -m pytest -n 2 -q

test-fast:  ## the suite without the slow runs (training smoke tests, many games)
	$(PY) -m pytest -n 2 -q -m "not slow and not long"

lint:
	$(PY) -m ruff check .
	$(PY) -m mypy

docs:  ## the documentation site, built strictly into site/ (the docs extra)
	$(PY) -m mkdocs build --strict --site-dir site

screenshots:  ## redraw docs/images/web_*.png from the web page in Chromium (the browser tests)
	BOARDGYM_SCREENSHOTS=docs/images $(PY) -m pytest -q tests/play/test_web_browser.py

docs-tables:  ## rerun the commands of every generated table in README.md, docs/ and checkpoints/
	$(PY) docs/tables.py

bench:
	$(PY) -m boardgym.bench.throughput

evaluate:  ## the main job: the shipped Reversi checkpoint against corner_best
	$(PY) -m boardgym evaluate reversi shipped:reversi corner_best --games 300 --seed 0
