# formats/: libdtcap.a (every formats/*.c).  Owned by the formats work.
CAP_LIB_SRCS := $(wildcard formats/*.c)
CAP_LIB := $(B)/libdtcap.a
CAP_LIB_ASAN := $(B)/asan/libdtcap.a
$(CAP_LIB): $(CAP_LIB_SRCS:%.c=$(B)/obj/%.o)
	$(ARCHIVE)
# The decoders' loops are a few instructions each (dtc_dec_u64's: 21
# bytes, an add per byte plane), 70% slower straddling a line (ALIGN_LOOPS,
# the top Makefile).
$(CAP_LIB_SRCS:%.c=$(B)/obj/%.o): CFLAGS += $(ALIGN_LOOPS)
$(CAP_LIB_ASAN): $(CAP_LIB_SRCS:%.c=$(B)/asan/obj/%.o)
	$(ARCHIVE)
CAP_LIB_TSAN := $(B)/tsan/libdtcap.a
$(CAP_LIB_TSAN): $(CAP_LIB_SRCS:%.c=$(B)/tsan/obj/%.o)
	$(ARCHIVE)

include formats/parquet/parquet.mk

# dtgen: the synthetic capture generator (tests and benchmarks, not a tool).
DTGEN := $(B)/bin/dtgen
ALL += $(DTGEN) $(CAP_LIB)
$(DTGEN): $(B)/obj/formats/gen/dtgen.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP) -lpthread -lm

# dthostile: the crafted captures of the fuzz corpus, tests and bench.
DTHOSTILE := $(B)/bin/dthostile
ALL += $(DTHOSTILE)
$(DTHOSTILE): $(B)/obj/formats/gen/dthostile.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP) -lpthread

# dtcdump: print a capture's contents through the library (debugging, tests).
DTCDUMP := $(B)/bin/dtcdump
ALL += $(DTCDUMP)
$(DTCDUMP): $(B)/obj/formats/gen/dtcdump.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP) -lpthread
# its --version is the tools' (scripts/version.mk)
$(B)/obj/formats/gen/dtcdump.o: $(DT_VERSION_FILE)
$(B)/obj/formats/gen/dtcdump.o: CFLAGS_BASE += -DDT_VERSION='"$(DT_VERSION)"'
