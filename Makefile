# pario: `make demo` and `make test` install what is missing (Open MPI, zlib, HDF5, PnetCDF,
# CMake, Ninja from Debian's packages; a virtual environment in .venv; the
# package) and then run.  Only `make test` adds Slurm + munge and MPICH.
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

.PHONY: all deps deps-test install demo test test-c test-py lint check bench clean

all: install

# What `make demo` needs: Open MPI, zlib, CMake, Ninja, python3-venv, and HDF5 (Open MPI
# build) and PnetCDF with their tools (the kernels' --hdf5 and --pnetcdf modes).
deps:
	@set -e; missing=""; \
	command -v mpicc >/dev/null 2>&1 || missing="$$missing openmpi-bin libopenmpi-dev"; \
	[ -f /usr/include/zlib.h ] || missing="$$missing zlib1g-dev"; \
	command -v cmake >/dev/null 2>&1 || missing="$$missing cmake"; \
	command -v ninja >/dev/null 2>&1 || missing="$$missing ninja-build"; \
	python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	[ -f /usr/include/hdf5/openmpi/hdf5.h ] || missing="$$missing libhdf5-openmpi-dev"; \
	command -v h5dump >/dev/null 2>&1 || missing="$$missing hdf5-tools"; \
	[ -f /usr/include/pnetcdf.h ] || missing="$$missing libpnetcdf-dev"; \
	command -v ncmpidump >/dev/null 2>&1 || missing="$$missing pnetcdf-bin"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# What only the tests need: Slurm's daemons and munge, PostgreSQL's server (the
# tests start private ones in a temporary directory), MPICH beside Open MPI, and
# chromium with its driver (the HTML reports are tested in a headless browser),
# node (the report page's scripts are run), gfortran (Fortran MPI programs
# are profiled under both MPIs) and jq (docs/report-json.md's example, run as
# written, pipes the JSON report through it).
# Installed without recommends, not started (policy-rc.d) and not enabled at
# boot: a developer's machine gets no new services.  (Debian's postgresql also
# initialises a "main" cluster in /var/lib/postgresql; it stays stopped.)
TEST_SERVICES := munge.service slurmctld.service slurmd.service postgresql.service
deps-test: deps
	@set -e; extra=""; \
	[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v srun >/dev/null 2>&1 || \
	  extra="slurmctld slurmd slurm-client"; \
	[ -x /usr/sbin/munged ] || extra="$$extra munge"; \
	command -v mpicc.mpich >/dev/null 2>&1 || extra="$$extra mpich libmpich-dev"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || extra="$$extra postgresql"; \
	[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || extra="$$extra chromium chromium-driver"; \
	command -v node >/dev/null 2>&1 || extra="$$extra nodejs"; \
	command -v gfortran >/dev/null 2>&1 || extra="$$extra gfortran"; \
	command -v jq >/dev/null 2>&1 || extra="$$extra jq"; \
	if [ -n "$$extra" ]; then \
	  echo "installing for the tests:$$extra"; \
	  $(SUDO) apt-get update -qq; \
	  policy=/usr/sbin/policy-rc.d; own_policy=""; \
	  if [ ! -e $$policy ]; then \
	    printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee $$policy >/dev/null; $(SUDO) chmod +x $$policy; own_policy=1; \
	  fi; \
	  before=$$(ls /etc/systemd/system/*.wants/ 2>/dev/null | tr '\n' ' '); \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$extra || \
	    { [ -z "$$own_policy" ] || $(SUDO) rm -f $$policy; exit 1; }; \
	  [ -z "$$own_policy" ] || $(SUDO) rm -f $$policy; \
	  instances=$$(ls /etc/systemd/system/*.wants/ 2>/dev/null | grep '^postgresql@.*\.service$$' | sort -u); \
	  for unit in $(TEST_SERVICES) $$instances; do \
	    case " $$before " in *" $$unit "*) continue;; esac; \
	    if command -v systemctl >/dev/null 2>&1; then $(SUDO) systemctl disable -q $$unit 2>/dev/null || true; \
	    else $(SUDO) rm -f /etc/systemd/system/*.wants/$$unit; fi; \
	  done; \
	fi

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The build directory is the environment's (pip install . alone builds in a temporary one).
$(STAMP): $(PY) $(SOURCES)
	$(PY) -m pip install -q -C build-dir=$(VENV)/build/{wheel_tag} ".[test]"
	touch $(STAMP)

install: deps $(STAMP)

demo: install
	@mkdir -p demo-out
	$(PARIO) run --trace --log demo-out/demo.pario -- mpirun -np 4 $$($(PARIO) path pario-demo-io) demo-out
	$(PARIO) report demo-out/demo.pario --html demo-out/demo.html

test-c: deps-test
	cmake -S . -B build/ctest -G Ninja -DPARIO_BUILD_TESTS=ON >/dev/null
	cmake --build build/ctest
	ctest --test-dir build/ctest --output-on-failure

lint: install
	$(VENV)/bin/ruff check python tests bench docs
	$(VENV)/bin/mypy

# Two workers (pytest-xdist): a test file's tests stay on one worker, and so do the tests of each
# service (tests/conftest.py); the tests that judge measured times run after them, alone.
TEST_WORKERS ?= 2
test-py: deps-test install
	$(VENV)/bin/pytest -q -rs -n $(TEST_WORKERS) --dist loadgroup --durations=10 -m "not measured" tests
	$(VENV)/bin/pytest -q -rs -m measured tests

test: test-c lint test-py

# The fast tier, for use while changing code (under 2 minutes here): ruff, mypy and the tests not
# marked slow (a second or more) or service (Slurm, PostgreSQL, the browser; tests/conftest.py).
# `make test` runs everything, and is what CI runs.
check: deps-test install
	$(VENV)/bin/ruff check python tests bench docs
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -q -rs -m "not slow and not service" tests

bench: install
	$(PY) bench/overhead.py

# Collective writes: ROMIO, OMPIO and the engine's algorithms on the kernels (~20 min;
# BENCH_ARGS=--quick for ~3 min).  Tables in build/bench-collective.md, samples beside them.
.PHONY: bench-collective
bench-collective: install
	$(PY) bench/collective.py --out build/bench-collective.md $(BENCH_ARGS)

# pario tune's strategies on a measured grid (~25 min on a shared 2-core machine; BENCH_ARGS=--quick
# for ~3 min, BENCH_ARGS="--from-samples build/bench-tune/samples.json" replays without measuring).
# Samples, replays and tables in build/bench-tune/.
.PHONY: bench-tune
bench-tune: install
	$(PY) bench/tune.py --out build/bench-tune --jobs 2 $(BENCH_ARGS)

clean:
	rm -rf build demo-out $(VENV)
