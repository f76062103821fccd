# kernel/: dt.ko.  The kernel version is whatever linux-headers-cloud-amd64
# installed (never hard-coded): the newest $(MODROOT)/*-cloud-amd64/build.
# These are recursive (=, ?=) on purpose and used only in recipes: they are
# looked up when a recipe runs, after the deps step, never while the
# makefiles are parsed.  On a fresh machine the headers appear only once
# scripts/install-deps.sh ran (a `KMAKE :=` once froze "/lib/modules//build"
# at parse time; tests/firstrun checks the order).
MODROOT ?= /lib/modules
KVER ?= $(shell ls -1d $(MODROOT)/*-cloud-amd64/build 2>/dev/null | sort -V | tail -n1 | sed 's,/build$$,,; s,.*/,,')
KDIR ?= $(MODROOT)/$(KVER)/build
KMAKE = $(MAKE) -C $(KDIR) M=$(TOP)/kernel
DT_KSRC := $(wildcard kernel/*.c kernel/*.h) kernel/Kbuild include/dt_abi.h scripts/systab.sed

ALL += $(B)/dt.ko
$(B)/dt.ko: $(DT_KSRC)
	@test -d "$(KDIR)" || { echo "no kernel headers under $(MODROOT)/*-cloud-amd64/build (KDIR '$(KDIR)'): scripts/install-deps.sh installs them" >&2; exit 1; }
	+$(KMAKE) modules
	@mkdir -p $(@D)
	cp kernel/dt_kptarget.ko $(@D)/dt_kptarget.ko
	cp kernel/dt.ko $@

# kbuild: the module builds without a single warning under W=1 and under
# sparse (C=1), each in a scratch copy so the tree's objects are untouched.
SUITES += kbuild
check-kbuild:
	@tests/run-suite.sh $(B)/results kbuild kernel/check-kbuild.sh $(KDIR) $(B)/kbuild
