# tests/ring: kernel/dt_ring.h in user space under TSan and ASan+UBSan.
SUITES += ring

RING_TEST_DEPS := tests/ring/ring_test.c kernel/dt_ring.h tests/check.h
$(B)/asan/bin/ring_test: $(RING_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $< -lpthread
$(B)/tsan/bin/ring_test: $(RING_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(TSAN_FLAGS) -o $@ $< -lpthread

check-ring: $(B)/asan/bin/ring_test $(B)/tsan/bin/ring_test
	@tests/run-suite.sh $(B)/results ring tests/ring/run.sh $(B)
