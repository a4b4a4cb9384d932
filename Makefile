# numoracle: convenience targets around meson/ninja.
#   make deps    install the missing Debian build dependencies (as root), or print the
#                sudo apt-get line to run (otherwise)
#   make build   configure build/ once, then compile
#   make demo    deps + build, then check rms_norm with a correct CPU candidate (PASS)
#                and with a mutant (FAIL; the demo still succeeds)
#   make test    deps + build, then the Criterion suites, the Python suite and the CLI cases
#   make soundness  20-seed soundness sweep at the large shapes (minutes)
#   make bench   bench/nmo_bench: ratios measured side by side (and bench-py)
#   make bench-py  the Python package's overhead over the C API (python_over_c=X)
#   make gpu-compile  compile every hip/ source for sm_90 (nvcc), gfx90a (hipcc) and
#                gfx942 (clang-19) without a GPU (hip/ci_compile.sh)
#   make gpu-sim configure build-sim/ with -Dgpu=sim and run every HIP kernel through the
#                CPU simulator and the oracle (nmo_gpu_test --shapes small --seeds 1)
#   make clean   remove build/
SHELL := /bin/bash
BUILD ?= build
NUMORACLE := ./$(BUILD)/apps/numoracle
DEB_PKGS := build-essential meson ninja-build pkg-config libmpfr-dev libgmp-dev \
            libcjson-dev libcriterion-dev libopenblas-dev python3-numpy python3-pytest
DEMO_ARGS := check --op rms_norm --dtype bf16 --shape 64x4097 --family gaussian --seed 1

.PHONY: all deps build demo test clean soundness bench bench-py campaign-tests gpu-compile gpu-sim

all: build

deps:
	@if ! command -v dpkg >/dev/null 2>&1; then \
	    echo "deps: no dpkg (not Debian/Ubuntu); make sure these are installed: $(DEB_PKGS)"; \
	    exit 0; \
	fi; \
	missing=""; \
	for p in $(DEB_PKGS); do \
	    dpkg -s $$p 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing$$missing"; \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	else \
	    echo "deps: missing:$$missing"; \
	    echo "sudo apt-get install -y$$missing"; \
	    exit 1; \
	fi

build:
	@if [ ! -f $(BUILD)/build.ninja ]; then meson setup $(BUILD); fi
	ninja -C $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory build
	$(NUMORACLE) $(DEMO_ARGS) --candidate cpu
	$(NUMORACLE) $(DEMO_ARGS) --candidate cpu:mut_acc_bf16 || test $$? -eq 1

test: deps
	@$(MAKE) --no-print-directory build
	meson test -C $(BUILD) --print-errorlogs --no-suite slow
	bash tests/cli/run.sh $(BUILD)/apps/numoracle
	bash tests/readme_example.sh $(BUILD)

# Larger sweeps and benchmarks: separate from `make test` (quote their output in notes).
# The campaign's kill/resume and shard tests (minutes each).
campaign-tests: build
	meson test -C $(BUILD) --print-errorlogs --suite slow

soundness: build
	NMO_SEEDS=20 NMO_LARGE=1 ./$(BUILD)/tests/test_soundness --verbose

bench: build
	./$(BUILD)/bench/nmo_bench
	./$(BUILD)/bench/nmo_tightness
	@$(MAKE) --no-print-directory bench-py

# Debian's python3 (python3-numpy), the package from the source tree, the build's library.
bench-py: build
	PYTHONPATH=python NUMORACLE_LIB=$(BUILD)/oracle/libnumoracle.so \
	    /usr/bin/python3 bench/py_overhead.py --driver $(BUILD)/bench/nmo_bind_bench

clean:
	rm -rf $(BUILD)

gpu-compile:
	bash hip/ci_compile.sh

gpu-sim:
	@if [ ! -f build-sim/build.ninja ]; then meson setup build-sim -Dgpu=sim -Dtests=disabled; fi
	ninja -C build-sim
	meson test -C build-sim gpu_sim --print-errorlogs
