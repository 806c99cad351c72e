# aqmlab: two commands do everything on a fresh machine.
#   make demo   set up, run the default scenario, write its results and plots
#   make test   set up, run the Rust and Python test suites
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.deps-stamp
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: setup system build demo test test-rust test-python bench clean

setup: system build

# Debian packages: headless Chromium and its WebDriver, for the report's browser test
# (tests/test_report.py); tshark, which reads pcap captures back (tests/test_traces.py;
# its question whether to let non-root users capture is answered no beforehand); ns-2
# 2.35, the seeds' simulator, which `aqmlab crosscheck ns2` runs beside aqmlab; iperf3,
# the emulator's traffic (`aqmlab emulate`, docs/emulator.md).
# Installed once; a no-op when all five are on the PATH.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
system:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v tshark >/dev/null && command -v ns >/dev/null && command -v iperf3 >/dev/null || { \
	  $(SUDO) apt-get update -qq && \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | $(SUDO) debconf-set-selections && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium chromium-driver tshark ns2 iperf3; }

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q maturin
	$(PY) -m pip install -q $$($(PY) -c "import tomllib;d=tomllib.load(open('pyproject.toml','rb'))['project'];print(' '.join(repr(x) for x in d['dependencies']+d['optional-dependencies']['test']))" | tr -d "'")
	touch $(STAMP)

# The core with profile-guided optimization (tools/pgo.py: an instrumented build,
# a minute of training on scenarios/, the optimized build); AQMLAB_PGO=0 builds
# plainly, in a third of the time.
build: $(STAMP)
	cd $(CURDIR) && $(PY) tools/pgo.py
	cargo build --release -q -p aqmlab-router

demo: setup
	aqmlab run scenarios/dumbbell.toml --out results/dumbbell --plot

test: setup test-rust test-python

test-rust:
	cargo test --workspace --release -q
	cargo test --release -q -p aqmlab-sim --features census --test census

test-python:
	$(PY) -m pytest -q

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) target results
