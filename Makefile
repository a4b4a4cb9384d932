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
#   make fuzz    configure build-fuzz/ with clang, ASan+UBSan and libFuzzer, then run each
#                harness of tests/fuzz/ for FUZZ_SECONDS (default 150) on a copy of its corpus
#   make sanitize  configure build-asan/ (-Db_sanitize=address,undefined) and run the fast
#                suites and the CLI cases there
#   make clean   remove build/
SHELL := /bin/bash
BUILD ?= build
NUMORACLE := ./$(BUILD)/apps/numoracle
DEB_PKGS := build-essential meson ninja-build pkg-config libmpfr-dev libgmp-dev \
            libcjson-dev libcriterion-dev libopenblas-dev python3-numpy python3-pytest \
            libopenmpi-dev openmpi-bin \
            libtomlplusplus-dev libgtest-dev
DEMO_ARGS := check --op rms_norm --dtype bf16 --shape 64x4097 --family gaussian --seed 1

.PHONY: all deps build demo test clean soundness bench bench-py campaign-tests gpu-compile gpu-sim fuzz sanitize
FUZZ_SECONDS ?= 150
FUZZ_HARNESSES := plan bundle sweep config plugin
# the fast suites under the sanitizers (the engine-heavy ones take tens of minutes there)
SAN_SUITES := test_fmt test_plan test_plan_fields test_tensor test_gen test_bundle test_plugin test_campaign \
              bundles_quick bundles_bad fuzz_replay_plan fuzz_replay_bundle fuzz_replay_sweep fuzz_replay_config fuzz_replay_plugin

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

# The HIP layer on the CPU simulator (CI): every kernel through the runner (gpu_sim), the GPU
# tier against the CPU checker and the certified engine with its controls (gpu_oracle_*),
# its CLI and Python paths, the backend-hip campaign judged by both oracles.
gpu-sim: deps
	@if [ ! -f build-sim/build.ninja ]; then meson setup build-sim -Dgpu=sim -Dtests=disabled; fi
	ninja -C build-sim
	meson test -C build-sim --print-errorlogs --no-suite slow

# libFuzzer needs clang (Debian's clang package; `make deps` does not install it).
fuzz:
	@command -v clang >/dev/null || { echo "fuzz: needs clang (apt-get install clang)"; exit 1; }
	@if [ ! -f build-fuzz/build.ninja ]; then CC=clang meson setup build-fuzz -Dfuzz=true \
	    -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link; fi
	ninja -C build-fuzz $(addprefix tests/fuzz_,$(FUZZ_HARNESSES))
	@for h in $(FUZZ_HARNESSES); do \
	    rm -rf build-fuzz/corpus-$$h && cp -r tests/fuzz/corpus/$$h build-fuzz/corpus-$$h; \
	    echo "== fuzz_$$h ($(FUZZ_SECONDS) s)"; \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
	    ./build-fuzz/tests/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=4096 \
	        -artifact_prefix=build-fuzz/crash-$$h- build-fuzz/corpus-$$h > build-fuzz/fuzz-$$h.log 2>&1; \
	    grep -E '^#[0-9]+ +DONE|^Done|ERROR|SUMMARY' build-fuzz/fuzz-$$h.log \
	        || true; \
	    test -z "$$(ls build-fuzz/crash-$$h-* 2>/dev/null)" || { echo "fuzz_$$h: crash inputs in build-fuzz/"; exit 1; }; \
	done

sanitize: build
	@if [ ! -f build-asan/build.ninja ]; then meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; fi
	ninja -C build-asan
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C build-asan --print-errorlogs $(SAN_SUITES)
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0 bash tests/cli/run.sh build-asan/oracle/numoracle
