# cli/: libdtcli.a (every cli/lib/*.c: recording, symbolization, flame
# graphs, SQL, shared by all three tools) and the tools' own fragments.
CLI_LIB_SRCS := $(wildcard cli/lib/*.c)
CLI_LIB := $(B)/libdtcli.a
CLI_LIB_ASAN := $(B)/asan/libdtcli.a

# --version of every tool: the VERSION file of the tree, compiled into util.o.
DT_VERSION := $(shell cat $(TOP)/VERSION)
$(B)/obj/cli/lib/util.o $(B)/asan/obj/cli/lib/util.o $(B)/tsan/obj/cli/lib/util.o: \
	CFLAGS_BASE += -DDT_VERSION='"$(DT_VERSION)"'
$(B)/obj/cli/lib/util.o $(B)/asan/obj/cli/lib/util.o $(B)/tsan/obj/cli/lib/util.o: VERSION

$(CLI_LIB): $(CLI_LIB_SRCS:%.c=$(B)/obj/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(CLI_LIB_ASAN): $(CLI_LIB_SRCS:%.c=$(B)/asan/obj/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

-include cli/dtrec/dtrec.mk
-include cli/dtreport/dtreport.mk
-include cli/dtsh/dtsh.mk
