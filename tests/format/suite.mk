# tests/format: the capture format (libdtcap) and its generator, under
# ASan/UBSan; fuzz-format: libFuzzer on the reader for a bounded time.
SUITES += format fuzz-format format-py

DTGEN_ASAN := $(B)/asan/bin/dtgen
$(DTGEN_ASAN): $(B)/asan/obj/formats/gen/dtgen.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP) -lpthread -lm

FMT_TEST := $(B)/asan/bin/fmt_test
$(FMT_TEST): $(B)/asan/obj/tests/format/fmt_test.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP) -lpthread

FMT_ROBUST := $(B)/asan/bin/fmt_robust
$(FMT_ROBUST): $(B)/asan/obj/tests/format/fmt_robust.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP) -lpthread

# include/dt_grow.h and dt_htab.h (header only; libdtcap and the tools use them).
TABLE_TEST := $(B)/asan/bin/table_test
$(TABLE_TEST): tests/format/table_test.c include/dt_grow.h include/dt_htab.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $<

# The threaded writer's round trips also run under TSan.
FMT_TEST_TSAN := $(B)/tsan/bin/fmt_test
$(FMT_TEST_TSAN): $(B)/tsan/obj/tests/format/fmt_test.o $(CAP_LIB_TSAN)
	@mkdir -p $(@D)
	$(CC) $(TSAN_FLAGS) -o $@ $^ $(LDLIBS_CAP) -lpthread

check-format: $(FMT_TEST) $(FMT_TEST_TSAN) $(DTGEN_ASAN) $(DTGEN) $(FMT_ROBUST) $(DTCDUMP) $(TABLE_TEST)
	@tests/run-suite.sh $(B)/results format tests/format/run.sh $(B) $(FMT_TEST) $(DTGEN_ASAN) $(FMT_TEST_TSAN) $(FMT_ROBUST) $(DTCDUMP) $(TABLE_TEST)

# The fuzzer is built by clang straight from the sources (its own
# instrumentation); DTC_FUZZ_NO_CHECKSUM lets mutated inputs past the
# checksums so the parsers behind them get exercised too.
FUZZ_FMT := $(B)/fuzz/fuzz_reader
FUZZ_FMT_NOSUM := $(B)/fuzz/fuzz_reader_nosum
# dtsym names every frame, demangled (demangle.c, libiberty's demangler)
FUZZ_SRCS := tests/format/fuzz_reader.c cli/lib/report/dtsym.c cli/lib/report/demangle.c \
	$(CAP_LIB_SRCS)
$(FUZZ_FMT): $(FUZZ_SRCS) cli/lib/report/dtsym.h cli/lib/report/demangle.h formats/dtcap_int.h formats/dtcap.h include/dt_grow.h include/dt_htab.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(CFLAGS_INC) -o $@ $(FUZZ_SRCS) $(LDLIBS_CAP) -liberty -lpthread
$(FUZZ_FMT_NOSUM): $(FUZZ_SRCS) cli/lib/report/dtsym.h cli/lib/report/demangle.h formats/dtcap_int.h formats/dtcap.h include/dt_grow.h include/dt_htab.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(CFLAGS_INC) -DDTC_FUZZ_NO_CHECKSUM \
		-o $@ $(FUZZ_SRCS) $(LDLIBS_CAP) -liberty -lpthread

check-fuzz-format: $(FUZZ_FMT) $(FUZZ_FMT_NOSUM) $(DTGEN) $(DTHOSTILE)
	@tests/run-suite.sh $(B)/results fuzz-format tests/format/fuzz.sh $(B) $(FUZZ_FMT) $(FUZZ_FMT_NOSUM) $(DTGEN) $(DTHOSTILE)

# format-py: a second reader, in Python from FORMAT.md alone, agrees with
# dtreport sql row for row (the format document is a contract).
check-format-py: $(DTGEN) $(B)/bin/dtreport $(DTCDUMP)
	@tests/run-suite.sh $(B)/results format-py tests/format/pyreader.sh $(B) $(DTGEN) $(B)/bin/dtreport $(DTCDUMP)
