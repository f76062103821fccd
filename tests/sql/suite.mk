# tests/sql: dtreport sql / export over captures, checked against
# independent paths (a dtcap_iter walker, the generator's own tallies and
# the exported database through the sqlite3 CLI).
SUITES += sql

# The ASan dtreport when its main exists; until then a stand-in that calls
# the same cmd_sql/cmd_export (installed under the name dtreport).
SQL_DTREPORT := $(if $(wildcard cli/dtreport/main.c),$(B)/asan/bin/dtreport,$(B)/tests/sql/bin/dtreport)

# The generator is not under test: built plain, so a finding in the writer
# (the formats suite's business) cannot hide the reader's results.
$(B)/tests/sql/mksql: $(B)/obj/tests/sql/mksql.o $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/sql/count: $(B)/asan/obj/tests/sql/count.o $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_CAP)
$(B)/tests/sql/grouped: $(B)/asan/obj/tests/sql/grouped.o $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)
$(B)/tests/sql/bin/dtreport: $(B)/asan/obj/tests/sql/drv.o $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

check-sql: $(SQL_DTREPORT) $(B)/tests/sql/mksql $(B)/tests/sql/count $(B)/tests/sql/grouped
	@B=$(B) DTREPORT=$(SQL_DTREPORT) DTGEN=$(B)/bin/dtgen \
		tests/run-suite.sh $(B)/results sql tests/sql/run.sh
