# tests/firstrun: `make` on a machine that has never run it.  The kernel
# headers must be looked up only after the deps step installed them; CI's
# machine already has them, so the suite simulates a fresh one (a copy of
# the tree, an empty modules root, a stand-in install step).
SUITES += firstrun

check-firstrun:
	@TOP=$(TOP) tests/run-suite.sh $(B)/results firstrun tests/firstrun/run.sh
