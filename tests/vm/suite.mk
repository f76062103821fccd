# tests/vm/: the qemu harness (vm-harness) and the in-VM tests of dt.ko
# (vm-kernel).
SUITES += vm-harness

check-vm-harness: tests/vm/run.sh tests/vm/init.sh tests/vm/selftest.sh
	@B=$(B) tests/run-suite.sh $(B)/results vm-harness tests/vm/selftest.sh
