# kernel/: dt.ko.  The kernel version is whatever linux-headers-cloud-amd64
# installed (never hard-coded): the newest /lib/modules/*-cloud-amd64/build.
KVER ?= $(shell ls -1d /lib/modules/*-cloud-amd64/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
KDIR ?= /lib/modules/$(KVER)/build

KMAKE := $(MAKE) -C $(KDIR) M=$(TOP)/kernel
DT_KSRC := $(wildcard kernel/*.c kernel/*.h) kernel/Kbuild include/dt_abi.h

ALL += $(B)/dt.ko
$(B)/dt.ko: $(DT_KSRC)
	@test -d "$(KDIR)" || { echo "no kernel headers at $(KDIR)"; exit 1; }
	+$(KMAKE) modules
	@mkdir -p $(@D)
	cp kernel/dt.ko $@

# kbuild: the module builds without a single warning under W=1 and under
# sparse (C=1), each in a scratch copy so the tree's objects are untouched.
SUITES += kbuild
check-kbuild:
	@tests/run-suite.sh $(B)/results kbuild kernel/check-kbuild.sh $(KDIR) $(B)/kbuild
