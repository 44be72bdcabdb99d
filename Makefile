# mnemo — the commands people type. CMake does the building underneath.
#   make              build everything into build/ (CLI build/mnemo, build/libmnemo.so + .a)
#   make run          install the build and runtime packages, build, and start `mnemo serve` on the
#                     default database (prints the URL; the guided demo is `build/mnemo demo`)
#   make test         install those and the test toolchain, build with ASan+UBSan (clang), run the
#                     whole suite on SQLite and again on PostgreSQL (pg/ tests: a throwaway server)
#   make tsan         the threaded tests under ThreadSanitizer (build/tsan; CI runs it after make test)
#   make deps         install what `make test` needs; `make deps-run` only what `make run` needs
#   make bench        build build/mnemo-bench
#   make install PREFIX=/usr/local
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all run demo test tsan bench install deps deps-run clean

all:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMNEMO_TESTS=OFF \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps test

deps-run:
	@scripts/install-deps run

run: deps-run all
	@$(BUILD)/mnemo serve $(SERVE_FLAGS)

demo: all
	@$(BUILD)/mnemo demo

test: deps
	@cmake -S . -B $(BUILD)/asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DMNEMO_SANITIZE=ON \
	    -DMNEMO_FUZZ=ON -DMNEMO_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/asan -j $(JOBS)
	@cd $(BUILD)/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS)

tsan: deps
	@scripts/tsan-test $(BUILD)/tsan

bench:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

install: all
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
