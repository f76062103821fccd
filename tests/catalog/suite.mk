# tests/catalog: the probe catalog's provider kinds (cli/lib/rec/provkind.c),
# under ASan/UBSan.
SUITES += catalog

$(B)/tests/catalog/provkind_test: tests/catalog/provkind_test.c $(B)/asan/obj/cli/lib/rec/provkind.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SAN_FLAGS) -o $@ $^

check-catalog: $(B)/tests/catalog/provkind_test
	@tests/run-suite.sh $(B)/results catalog bash -c '. tests/lib.sh; sanitizers_strict; \
		$(B)/tests/catalog/provkind_test'
