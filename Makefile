# Faultline: `make demo` and `make test` set up everything they need on first use.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.faultline-installed
RING := loadgen/.rados-ring-built
WEB := service/web

.PHONY: setup demo demo-current demo-stop test test-full test-unit test-lab lint lab-up lab-down bench examples clean .debian-packages

setup: $(STAMP) $(RING) $(WEB)/node_modules/.package-lock.json

.debian-packages:
	@scripts/install-debian-packages

$(STAMP): pyproject.toml | .debian-packages
	@test -x $(BIN)/python || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@$(BIN)/python -c 'import rados' || { echo "python3-rados is not visible from $(VENV)"; exit 1; }
	@touch $@

# the librados closed loop's C path (loadgen/rados_ring.c), built again when it changes
$(RING): loadgen/rados_ring.c loadgen/rados_ring_build.py $(STAMP)
	$(BIN)/python -m loadgen.rados_ring_build
	@touch $@

$(WEB)/node_modules/.package-lock.json: $(WEB)/package.json | .debian-packages
	cd $(WEB) && npm install --no-audit --no-fund --silent

# monitoring before the suite, so that each run's time to alert is measured; the suite
# calibrates each load path first and loads each at the same share of its capacity
demo: setup
	$(BIN)/faultline lab up
	@scripts/demo-services start
	$(BIN)/faultline monitoring up
	$(BIN)/faultline suite experiments/suites/demo.json
	@echo
	@echo "Runs so far:  $(BIN)/faultline runs    A report:  $(BIN)/faultline report RUN_ID"
	@echo "Side by side: $(BIN)/faultline compare RUN_ID RUN_ID ..."
	@echo "The labs, the web service, a worker, Prometheus and Alertmanager are still up. Stop them with:  make lab-down"

# the same comparison on the current releases' labs: Ceph 18 and Swift 2.35 under Debian's
# systemd units in containers (their root filesystems are built once, about 2.5 minutes)
demo-current: setup
	$(BIN)/faultline lab up --release current
	@scripts/demo-services start
	$(BIN)/faultline monitoring up
	$(BIN)/faultline suite experiments/suites/demo-current.json
	@echo
	@echo "Side by side: $(BIN)/faultline compare RUN_ID RUN_ID ...    Stop everything: make lab-down"

demo-stop:
	@scripts/demo-services stop

# every fault class on both labs at least once; ends with the slowest tests
test: setup lint test-unit test-lab

# the exhaustive lab matrix, before a release or after a change to the labs, the faults or
# the control: the tests marked `full` too, then every experiment of the catalogue on both
# labs with the same workload (experiments/suites/all.json, fills at 50% and 75% included)
test-full: setup lint test-unit
	$(BIN)/python -m pytest -q tests/integration --durations=25
	$(BIN)/faultline lab up
	$(BIN)/faultline suite experiments/suites/all.json

lint: setup
	$(BIN)/ruff check .

test-unit: setup
	$(BIN)/python -m pytest -q tests/unit

# in two streams side by side (tests/integration/streams.py): the Reef lab's and the Swift
# lab's own tests beside the Ceph lab's
test-lab: setup
	$(BIN)/python scripts/test_lab_streams.py

# the load generator's benchmarks (bench/), on the labs; a summary in bench/results/
bench: setup
	$(BIN)/python -m bench.run_all

# the README's worked examples: one run of each on the labs, stored in docs/examples/
examples: setup
	$(BIN)/python scripts/worked_examples.py

lab-up: setup
	$(BIN)/faultline lab up

lab-down: setup demo-stop
	$(BIN)/faultline monitoring down
	$(BIN)/faultline lab down

clean: lab-down
	rm -rf $(VENV) $(WEB)/node_modules build $(RING) loadgen/_rados_ring*.so
