# pario: `make demo` and `make test` install what is missing (Open MPI, zlib,
# and, for the tests, Slurm + munge and MPICH beside Open MPI, from Debian's
# packages; a virtual environment in .venv; the package) and then run.
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
PARIO := $(VENV)/bin/pario
STAMP := $(VENV)/.pario-installed
SOURCES := $(shell find src include python -type f \( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.txt' -o -name '*.j2' \) 2>/dev/null) CMakeLists.txt pyproject.toml
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Open MPI refuses to run as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

.PHONY: all deps install demo test test-c test-py lint bench clean

all: install

deps:
	@set -e; missing=""; \
	command -v mpicc >/dev/null 2>&1 || missing="$$missing openmpi-bin libopenmpi-dev"; \
	[ -f /usr/include/zlib.h ] || missing="$$missing zlib1g-dev"; \
	command -v cmake >/dev/null 2>&1 || missing="$$missing cmake"; \
	command -v ninja >/dev/null 2>&1 || missing="$$missing ninja-build"; \
	python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	extra=""; \
	[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v srun >/dev/null 2>&1 || \
	  extra="slurmctld slurmd slurm-client"; \
	[ -x /usr/sbin/munged ] || extra="$$extra munge"; \
	command -v mpicc.mpich >/dev/null 2>&1 || extra="$$extra mpich libmpich-dev"; \
	if [ -n "$$missing$$extra" ]; then \
	  echo "installing:$$missing $$extra"; \
	  $(SUDO) apt-get update -qq; \
	fi; \
	if [ -n "$$missing" ]; then \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi; \
	if [ -n "$$extra" ]; then \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$extra; \
	fi

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) $(SOURCES)
	$(PY) -m pip install -q ".[test]"
	touch $(STAMP)

install: deps $(STAMP)

demo: install
	@mkdir -p demo-out
	$(PARIO) run --log demo-out/demo.pario -- mpirun -np 4 $$($(PARIO) path pario-demo-io) demo-out
	$(PARIO) report demo-out/demo.pario

test-c: deps
	cmake -S . -B build/ctest -G Ninja -DPARIO_BUILD_TESTS=ON >/dev/null
	cmake --build build/ctest
	ctest --test-dir build/ctest --output-on-failure

lint: install
	$(VENV)/bin/ruff check python tests bench docs

test-py: install
	$(VENV)/bin/pytest -q tests

test: test-c lint test-py

bench: install
	$(PY) bench/overhead.py

clean:
	rm -rf build demo-out $(VENV)
