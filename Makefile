# dt - top-level build.  Each part of the tree owns a fragment (*.mk) that
# adds its programs to ALL, its test suites to SUITES (with a rule
# check-NAME) and its benchmarks to BENCHES (with a rule bench-NAME).

.DEFAULT_GOAL := all
SHELL := /bin/bash
TOP := $(CURDIR)
B := $(TOP)/build

CC ?= cc
# The language and warnings of every C file of the tree, the tools' and the
# test programs' alike (fragments use these, never a copy).
# -D_GNU_SOURCE: we need pipe2, memmem, getline etc. while staying -std=c11
CFLAGS_STD := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g
# The tree's include paths: a fragment whose library has headers of its own
# adds their directory here (formats/parquet/parquet.mk).
CFLAGS_INC := -I$(TOP)/include -I$(TOP)/formats -I$(TOP)/cli/lib -I$(TOP)/cli/lib/rec \
	-I$(TOP)/cli/lib/report -I$(B)/gen
CFLAGS_BASE = $(CFLAGS_STD) $(CFLAGS_INC)
CFLAGS ?= -O2
SAN_FLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN_FLAGS := -O1 -fsanitize=thread -fno-omit-frame-pointer
# libFuzzer targets, built by clang straight from the sources they exercise
# (not -Werror: clang's warnings are not gcc's)
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined
# For loops whose trip counts are known only at run time (the Parquet
# writer's and its export's): -O2's very-cheap cost model leaves them
# scalar, -O3's model vectorizes them (7% of a 10M-event export's CPU
# time).  GCC's flag only (clang refuses it), asked of $(CC) when an object
# is built: after the deps step, as a recursively expanded variable.
VECT_DYNAMIC = $(shell $(CC) -fvect-cost-model=dynamic -E -x c /dev/null >/dev/null 2>&1 && \
	echo -fvect-cost-model=dynamic)
# For the scans' hot loops (libdtcap's decoders, the grouped SQL scan):
# a loop of a few instructions runs up to 70% slower when it straddles a
# 64-byte line, which any edit elsewhere in the link may make it do (the
# same machine code, moved; doc/SCALE.md, branch s6gscan).  Aligned to 32
# bytes they stay whole wherever the linker puts them.  Asked of $(CC)
# like VECT_DYNAMIC.
ALIGN_LOOPS = $(shell $(CC) -falign-loops=32 -E -x c /dev/null >/dev/null 2>&1 && \
	echo -falign-loops=32)
LDLIBS_CAP := -lzstd -lxxhash
# libiberty: the demangler (c++filt's), static only in Debian
LDLIBS_ALL := -lzstd -lxxhash -lsqlite3 -ledit -ldw -lelf -lcapstone -llzma -lz -liberty -lpthread -lm
# libdw.a's own dependencies, for -static links
LDLIBS_DW_STATIC := -ldw -lelf -lz -llzma -lbz2 -lzstd

ALL :=
SUITES :=
BENCHES :=

# The recipe of every static library: an archive of exactly its
# prerequisites (rm first: ar would keep members of objects since removed).
define ARCHIVE
@mkdir -p $(@D)
rm -f $@ && ar rcs $@ $^
endef

include scripts/deps.mk
include scripts/version.mk

# Object trees: normal (-O2, also linked -static for the VM), ASan+UBSan,
# TSan.  Every .c of the tree builds in each flavour on demand.
$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -MMD -MP -c -o $@ $<
$(B)/asan/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -MMD -MP -c -o $@ $<
$(B)/tsan/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(TSAN_FLAGS) -MMD -MP -c -o $@ $<
-include $(shell find $(B) -name '*.d' 2>/dev/null)
include kernel/kernel.mk
include formats/formats.mk
include cli/cli.mk
include tests/tests.mk
include bench/bench.mk

# Nothing builds before the packages it needs are installed, even under -j.
$(ALL) $(addprefix check-,$(SUITES)) $(addprefix bench-,$(BENCHES)): | $(DEPS_STAMP)

.PHONY: all check bench demo deps clean distclean $(addprefix check-,$(SUITES)) $(addprefix bench-,$(BENCHES))

all: deps $(ALL)

# make check: every suite runs even if another failed; each writes
# build/results/SUITE.res (PASS/FAIL lines) through tests/run-suite.sh and
# a suite that left no result (failed to build) counts as failed.
check: deps
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@$(if $(SUITES),$(MAKE) --no-print-directory -k $(addprefix check-,$(SUITES)) || true,true)
	@tests/summarize.sh $(B)/results $(SUITES)

bench: deps
	@$(if $(BENCHES),$(MAKE) --no-print-directory -k $(addprefix bench-,$(BENCHES)),true)

clean:
	rm -rf $(B) out
	-$(MAKE) -C $(KDIR) M=$(TOP)/kernel clean >/dev/null 2>&1

distclean: clean
