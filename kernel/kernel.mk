# kernel/: dt.ko.  The kernel version is whatever linux-headers-cloud-amd64
# installed (never hard-coded): the newest /lib/modules/*-cloud-amd64/build.
KVER ?= $(shell ls -1d /lib/modules/*-cloud-amd64/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
KDIR ?= /lib/modules/$(KVER)/build
