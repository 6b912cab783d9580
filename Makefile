# dqlab -- delay-queue strategies side by side on a real Redis.
#
#   make            build bin/dqlab
#   make report     install missing packages, run the quick experiment suite
#                   and `dqlab probes` and `dqlab opcost`, write report/out/REPORT.md and
#                   report/out/index.html (FULL=1: the full suite)
#   make test       install missing packages, build and run the Criterion
#                   tests against a private redis-server
#   make test-sanitize   the same tests under AddressSanitizer + UBSan
#   make test-browser    check in headless Chromium that the first screen of
#                   HTML (default report/out/index.html) shows the contents
#                   and the summary matrix and that wide tables scroll
#                   (tools/firstscreen.sh); its screenshot goes to SHOT
#                   (default report/out/firstscreen.png)
#   make exercise-check EX=ID NAME=STRATEGY   run a coursework exercise's
#                  machine-checked acceptance on strategy NAME (dqlab
#                  exercise: its flags, a trial with dqlab check, the
#                  conformance suite); `bin/dqlab exercise` lists them
#   make bench     install missing packages, measure speed and scale into
#                  results/bench/, targets.csv the targets table (FULL=1:
#                  longer trials, more repeats)
#   make clean
#
# SANITIZER=asan builds everything with -fsanitize=address,undefined into
# build/asan (as Redis's src/Makefile does with its SANITIZER switch).

CC      ?= cc
PKGS    := hiredis jansson libcmark inih
OPT     ?= -O2
SANITIZER ?=

ifeq ($(SANITIZER),asan)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  BUILD    := build/asan
else ifeq ($(SANITIZER),)
  SANFLAGS :=
  BUILD    := build/default
else
  $(error SANITIZER must be empty or asan, not '$(SANITIZER)')
endif

# Recursive (=) so that pkg-config runs at recipe time, after deps.sh.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
CFLAGS  := $(OPT) -g -std=gnu11 -Wall -Wextra -Werror -pthread -MMD -MP $(SANFLAGS)
LDFLAGS := -pthread $(SANFLAGS)
LDLIBS   = $(PKG_LIBS) -lm

LIB_SRC  := $(wildcard strategies/*.c) \
            $(filter-out harness/main.c harness/aofshim.c,$(wildcard harness/*.c)) \
            $(wildcard report/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/harness/main.o
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
DQLAB    := $(if $(SANITIZER),$(BUILD)/dqlab,bin/dqlab)
# LD_PRELOAD shim for the private redis-server (harness/oscrash.h): not in
# libdq.a, and never sanitized (redis-server is not instrumented).
AOFSHIM  := $(BUILD)/libdqaofshim.so

.DELETE_ON_ERROR:
# Keep test objects: make would delete them as intermediates of tests/%.
.SECONDARY: $(TEST_BIN:=.o)
.PHONY: all deps report test test-sanitize test-build test-browser bench clean circles \
        exercise-check

all: $(DQLAB) $(AOFSHIM)

deps:
	@sh tools/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/libdq.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(AOFSHIM): harness/aofshim.c
	@mkdir -p $(@D)
	$(CC) $(OPT) -g -std=gnu11 -Wall -Wextra -Werror -fPIC -shared -MMD -MP \
	    -o $@ $< -ldl

$(DQLAB): $(MAIN_OBJ) $(BUILD)/libdq.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libdq.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcriterion

test-build: $(DQLAB) $(TEST_BIN) $(AOFSHIM)

# The top-level targets re-enter make after deps.sh so that pkg-config sees
# freshly installed packages.
test:
	@sh tools/deps.sh test
	@$(MAKE) --no-print-directory test-build
	@sh tools/circles.sh $(BUILD)
	@sh tests/run.sh $(BUILD) $(DQLAB)

# No two files of harness/, report/ or strategies/ call each other,
# directly or through others (tools/circles.sh; `make test` runs it).
circles: all
	@sh tools/circles.sh $(BUILD)

test-sanitize:
	@$(MAKE) --no-print-directory test SANITIZER=asan

# The first-screen check on one page; `make test` runs it on the fixtures in
# tests/browser/ (one of them must fail it) and on the report of a smoke run
# (tests/smoke/).
HTML ?= report/out/index.html
SHOT ?= report/out/firstscreen.png
test-browser:
	@sh tools/deps.sh test
	@mkdir -p $(dir $(SHOT))
	@sh tools/firstscreen.sh --screenshot $(SHOT) $(HTML)

# An exercise's acceptance (harness/exercise.h): builds dqlab and the
# conformance suite with the strategy in them, then runs every check.
exercise-check:
	@sh tools/deps.sh test
	@$(MAKE) --no-print-directory $(DQLAB) $(BUILD)/tests/test_conformance
	@if [ -z "$(EX)" ] || [ -z "$(NAME)" ]; then \
	    $(DQLAB) exercise; \
	    echo "make exercise-check: give EX=<exercise> NAME=<strategy>" >&2; \
	    exit 2; \
	fi
	@$(DQLAB) exercise '$(EX)' '$(NAME)' --tests $(BUILD)/tests

REPORT_ARGS := $(if $(filter-out 0,$(FULL)),,--quick)
OPCOST_FULL := --n 1000,10000,100000,1000000,10000000 --ops 20000000
OPCOST_ARGS := $(if $(filter-out 0,$(FULL)),$(OPCOST_FULL))
report:
	@sh tools/deps.sh
	@$(MAKE) --no-print-directory all
	@# Exit 1 from an experiment is a finding (a strategy broke a guarantee it
	@# declares): the report shows it, so go on; anything else stops.
	@for f in experiments/*.ini; do \
	    rc=0; ./bin/dqlab experiment "$$f" $(REPORT_ARGS) || rc=$$?; \
	    if [ $$rc -eq 1 ]; then \
	        echo "make report: $$f: a strategy broke a guarantee it declares; see the report (recipes.ini does so on purpose: the tutorials' recipes as written)" >&2; \
	    elif [ $$rc -ne 0 ]; then exit $$rc; fi; \
	done
	@# Claims about Redis itself (C06-C09, C20, C22, C27, C28): about 10 s,
	@# own server.
	./bin/dqlab probes --results results
	@# The failure modes as message sequence charts from real witness
	@# trials (MONITOR captures, mscgen): about 2 s.
	./bin/dqlab witness --results results
	@# The heap's and the wheel's cost per operation against the pending
	@# tasks (C17), both mixes: a few seconds (FULL=1: up to 10M pending,
	@# about 1 GB and several minutes).
	./bin/dqlab opcost --mix now,steady $(OPCOST_ARGS) --out results/opcost
	./bin/dqlab report results

# `dqlab bench`: speed against references of the same run, backlog
# scaling, lateness under load into results/bench/<stamp>/ (within 8
# minutes on 2 cores; FULL=1: longer trials, more repeats); `dqlab report`
# shows it in its Performance section.
BENCH_ARGS := $(if $(filter-out 0,$(FULL)),--full,--quick)
bench:
	@sh tools/deps.sh
	@$(MAKE) --no-print-directory all
	./bin/dqlab bench $(BENCH_ARGS)

clean:
	rm -rf build bin

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_BIN:=.d) $(AOFSHIM:.so=.d)
