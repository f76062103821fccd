# tests/safety: what a hostile capture or statement must not do to a root
# user of dtreport and dtsh (issue 21): SQL that writes files, symbol
# tables whose counts make loading quadratic, control bytes that reach the
# terminal, directories of captures too many to open, Ctrl-C that does not
# stop symbol loading or leaves a result-looking output behind.
SUITES += safety

check-safety: $(B)/asan/bin/dtreport $(B)/asan/bin/dtsh $(B)/bin/dtgen $(B)/bin/dthostile
	@B=$(B) tests/run-suite.sh $(B)/results safety tests/safety/run.sh
