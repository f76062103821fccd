# tests/checklib: tests/check.h itself, written to from several threads at
# once (under TSan and ASan+UBSan).
SUITES += checklib

$(B)/tests/checklib/check_test-tsan: tests/checklib/check_test.c tests/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(TSAN_FLAGS) -o $@ $< -lpthread
$(B)/tests/checklib/check_test-asan: tests/checklib/check_test.c tests/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< -lpthread

check-checklib: $(B)/tests/checklib/check_test-tsan $(B)/tests/checklib/check_test-asan \
		tests/checklib/run.sh tests/lib.sh
	@tests/run-suite.sh $(B)/results checklib tests/checklib/run.sh $(B)
