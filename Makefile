# Two commands: `make demo` and `make test`. Each creates .venv and installs the project when needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test train install install-dev install-train install-cluster install-exchange install-hub hub clean sandbox student-wheel

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	$(PY) -m autograder.course.guard  # nbgrader from .venv never releases checks.py or reference.py
	touch $@

install: $(VENV)/.installed

# the developers' tools (the `dev` extra: pytest, pytest-xdist, ruff, the LTI platform the tests run the tool against),
# which `make test` needs and a grader does not
$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install-dev: $(VENV)/.installed-dev

# the course on Kubernetes and dask-gateway (autograder.cluster, autograder.grading.gateway; their tests skip without it)
install-cluster: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[cluster]'

# ngshare (the `exchange` extra), the exchange service of a hub on Kubernetes, in .exchange/venv: an environment of its
# own, with SQLAlchemy below 2 (see pyproject.toml), which tests/autograder/exchange/test_ngshare.py runs it from
EXCHANGE_VENV := .exchange/venv
$(EXCHANGE_VENV)/.installed: pyproject.toml
	test -x $(EXCHANGE_VENV)/bin/python || $(PYTHON) -m venv $(EXCHANGE_VENV)
	$(EXCHANGE_VENV)/bin/python -m pip install --quiet "sqlalchemy<2" $$($(PYTHON) -c "import tomllib; \
	print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['exchange']))")
	touch $@

install-exchange: $(EXCHANGE_VENV)/.installed

# torch, for re-training the store's model and for the training test (skipped without it)
install-train: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[train]'

# JupyterHub (the `hub` extra) and its proxy, configurable-http-proxy, from npm into .hub/node/; each installed once
# (stamps, as for .venv), so the hub restarts without the network
HUB_PROXY := .hub/node/node_modules/.bin/configurable-http-proxy
$(VENV)/.installed-hub: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[hub]'
	touch $@

# The hub's runtime, .hub/venv: the hub, every account's server and the grading service run as other accounts than
# the one that made .venv, so from a Python every account can run (autograder.hub.runtime picks it: python3 or
# Debian's /usr/bin/python3, installed with apt-get where none is open to all; HUB_PYTHON=... names another)
HUB_VENV := .hub/venv
HUB_PY   := $(HUB_VENV)/bin/python
# with the verdict in JupyterLab, labextension/ (built with @jupyterlab/builder from npm: its sources are prerequisites)
LAB_SOURCES := $(wildcard labextension/lib/*.js labextension/attention_checks/*.py) labextension/package.json \
	labextension/package-lock.json labextension/pyproject.toml
$(HUB_VENV)/.installed: $(VENV)/.installed pyproject.toml $(LAB_SOURCES)
	$(PY) -m autograder.hub.runtime --venv $(HUB_VENV)

$(HUB_PROXY):
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js \
	(sudo apt-get install nodejs npm), then run make hub again"; exit 1; }
	npm install --silent --prefix .hub/node configurable-http-proxy
	touch $@

install-hub: $(VENV)/.installed-hub $(HUB_VENV)/.installed $(HUB_PROXY)

# the course on JupyterHub at http://localhost:8000 (each account's server at http://<account>.localhost:8000), as
# root: an instructor and student1..3, each a system account, nbgrader's exchange; Ctrl-C stops it
hub: install-hub sandbox
	$(HUB_PY) -m autograder.hub $(HUB_ARGS)

# bubblewrap, the sandbox student code is graded in: installed with apt where this runs as root, else said how
sandbox:
	@command -v bwrap >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || { apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
	    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; } || true
	@command -v bwrap >/dev/null 2>&1 || echo "bubblewrap is missing: install it (sudo apt-get install bubblewrap); \
	without it the grading below refuses to run students' code"

# a tour of the store and its model, then the example class graded with nbgrader into demo/: every assignment of
# source/ that examples/submissions holds (every example student hands in attention and positions), each in turn,
# one gradebook, a table and a report (demo/reports/<assignment>.html) per assignment
demo: $(VENV)/.installed sandbox
	$(PY) -m lib.tour
	$(PY) -m autograder.course

test: $(VENV)/.installed-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -q

# the student package: lib and its data in one wheel, dist/attention_course_lib-<version>-py3-none-any.whl
student-wheel: $(VENV)/.installed
	$(PY) packaging/student_wheel.py --dist dist

train: install-train
	$(PY) recordings/catalogue.py
	$(PY) recordings/transformer.py

clean:
	rm -rf $(VENV) .pytest_cache
