# The two commands of the README. Both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m linnet.demo

# Bytecode is written even where the environment asks not to (PYTHONDONTWRITEBYTECODE): the
# suite starts hundreds of Python processes, each of which would compile the package again.
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n auto --dist worksteal

bench: $(STAMP)
	$(PY) benchmarks/frontend.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
