# cli/: libdtcli.a and the tools' own fragments.  cli/lib has two halves
# that never include each other's headers: rec/ records (probes, the dt and
# perf sources, tracefs, uprobes, unwinding, ELF symbols, the capture
# writer's driver) and report/ analyses (symbolization, filters, the report
# engine and its command lines, SQL, export); cli/lib itself holds what
# both use (util).  One archive for all three tools.
CLI_LIB_SRCS := $(wildcard cli/lib/*.c cli/lib/rec/*.c cli/lib/report/*.c)
CLI_LIB := $(B)/libdtcli.a
CLI_LIB_ASAN := $(B)/asan/libdtcli.a

# The Parquet export's loops (widening a block's columns) have trip counts
# known only at run time (VECT_DYNAMIC, the top Makefile).
$(B)/obj/cli/lib/report/export_parquet.o: CFLAGS += $(VECT_DYNAMIC)
# The grouped scan's counting loops (an increment per event into a dense
# table) ran 5-6% slower moved across a line by an unrelated edit
# (ALIGN_LOOPS, the top Makefile).
$(B)/obj/cli/lib/report/dtsql_gscan.o: CFLAGS += $(ALIGN_LOOPS)

$(CLI_LIB): $(CLI_LIB_SRCS:%.c=$(B)/obj/%.o)
	$(ARCHIVE)
$(CLI_LIB_ASAN): $(CLI_LIB_SRCS:%.c=$(B)/asan/obj/%.o)
	$(ARCHIVE)

include cli/dtrec/dtrec.mk
include cli/dtreport/dtreport.mk
include cli/dtsh/dtsh.mk

# Syscall numbers for the perf source, from the compiler's own
# <asm/unistd.h> (found by the compiler, so no path is looked up before
# the dependencies are installed), by dt.ko's generator (scripts/systab.sed).
$(B)/gen/usystab.h: scripts/systab.sed | $(DEPS_STAMP)
	@mkdir -p $(@D)
	echo '#include <asm/unistd.h>' | $(CC) -E -dM -x c - | sed -n -f scripts/systab.sed >$@.tmp
	test -s $@.tmp && mv $@.tmp $@
$(B)/obj/cli/lib/rec/perf_attr.o $(B)/asan/obj/cli/lib/rec/perf_attr.o $(B)/tsan/obj/cli/lib/rec/perf_attr.o: $(B)/gen/usystab.h
