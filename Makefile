# judge-bias: `make demo` builds the warehouse on the embedded demo data;
# `make test` runs the quick tier of the tests, `make test-full` the rest; CI runs
# both. Each creates .venv from nothing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export DO_NOT_TRACK := 1
export GX_ANALYTICS_ENABLED := False
# Python writes the bytecode of what it imports (the venv is installed --no-compile,
# below), also where the environment sets PYTHONDONTWRITEBYTECODE: otherwise every
# process compiles dbt, pandas and Great Expectations again (measured: importing the
# three 9.4 -> 4.7 CPU s; a demo build, GLMs none, 35.5 -> 28.3 CPU s)
export PYTHONDONTWRITEBYTECODE :=

.PHONY: demo test test-full lint bench clean chromium spark
# Debian's chromium renders the report in the browser test; root runs apt-get, others sudo -n.
APT := $(if $(filter 0,$(shell id -u)),apt-get,sudo -n apt-get)

# --no-compile: Python compiles the modules it imports on first use, not all ~18,600 files
# of the locked packages at install (measured: 102 -> 55 CPU s for both locks)
$(BIN)/judge-bias: requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile --no-deps -e .
	touch $@

# test and lint tools (the `dev` extra), pinned in their own lock
$(BIN)/pytest: requirements-dev.lock $(BIN)/judge-bias
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -r requirements-dev.lock
	touch $@

# The Spark route (docs/spark.md): pyspark and dbt-spark[session], pinned in their
# own lock on top of requirements.lock; Spark runs on Java 17, which pip cannot install.
spark: $(BIN)/pyspark
$(BIN)/pyspark: requirements-spark.lock $(BIN)/judge-bias
	@java -version >/dev/null 2>&1 || { echo "make spark: the Spark route needs Java 17 and \`java\` is not on PATH; install it (Debian: apt-get install openjdk-17-jre-headless) and run make again" >&2; exit 1; }
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -r requirements-spark.lock -c requirements.lock
	touch $@

demo: $(BIN)/judge-bias
	$(BIN)/judge-bias build --data data/demo
	$(BIN)/judge-bias report --out warehouse/report.html
	@echo "tables: warehouse/judge_bias.duckdb (schema main); BI snapshot: warehouse/bi.duckdb; report (open in a browser): $(CURDIR)/warehouse/report.html"

# mypy and sqlfluff (a minute of CPU each from a fresh clone) run side by side
lint: $(BIN)/pytest
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests
	$(BIN)/mypy & mypy=$$!; $(BIN)/sqlfluff lint models; sqlfluff=$$?; \
	  wait $$mypy && exit $$sqlfluff

# Two tiers (tests/conftest.py FULL_TIER): `make test` runs the quick tier (every unit
# and statistical test, the shared demo / broken / Play Favorites builds and the tests
# that read them); `make test-full` runs the rest (each importer end to end, the Spark
# route, the browser, the many-folder studies, other dbt projects and build routes,
# the GLMs against their references); CI (.ci/run) runs both.
# The coverage figure counts the package's lines run in the pytest process (dbt
# builds run in a subprocess, so code only dbt's Python models call is not counted);
# `make test` starts it afresh, `make test-full` adds to it (after both: the suite's).
# target/pytest-memory[-full].tsv: which tests raised the peak memory;
# target/pytest-cpu[-full].tsv: each test's CPU seconds (tests/conftest.py). pytest ends
# with the 15 slowest tests (wall) and the 15 that used most CPU; `time` prints the
# whole run's real/user/sys; the coverage and peak-memory figures follow, printed when
# a test fails too. Two pytest-xdist workers, one file (or group of files sharing a
# build: tests/conftest.py XDIST_GROUPS) per worker at a time;
# JUDGE_BIAS_TEST_WORKERS=0 runs in one process
JUDGE_BIAS_TEST_WORKERS ?= 2
# $(call pytest_tier,TIER,LOG SUFFIX,EXTRA PYTEST ARGS)
define pytest_tier
	@mkdir -p target && rm -f target/pytest-memory$(2).tsv target/pytest-cpu$(2).tsv
	status=0; time JUDGE_BIAS_TIER=$(1) JUDGE_BIAS_MEMLOG=target/pytest-memory$(2).tsv \
	  JUDGE_BIAS_CPULOG=target/pytest-cpu$(2).tsv \
	  $(BIN)/pytest -q -n $(JUDGE_BIAS_TEST_WORKERS) --dist loadfile --cov=judge_bias --cov-report= \
	  $(3) --durations=15 || status=$$?; \
	$(BIN)/coverage report --precision=1 | tail -1 | awk '{print "coverage of python/judge_bias: " $$NF " of lines"}'; \
	echo "peak memory steps (pytest process, finished children):" && tail -4 target/pytest-memory$(2).tsv; \
	exit $$status
endef

test: $(BIN)/pytest lint
	$(call pytest_tier,quick,,)

test-full: $(BIN)/pytest $(BIN)/pyspark chromium
	$(call pytest_tier,full,-full,--cov-append)

chromium:
	@command -v chromium >/dev/null 2>&1 \
	  || { $(APT) update && DEBIAN_FRONTEND=noninteractive $(APT) install -y chromium; } \
	  || echo "chromium could not be installed: tests/test_report_browser.py will be skipped"

bench: $(BIN)/judge-bias
	$(BIN)/judge-bias bench --builds
	$(BIN)/judge-bias bench

clean:
	rm -rf warehouse target logs
