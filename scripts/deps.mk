# Installs missing Debian packages once per build tree.
#
# The stamp is also read as a makefile: GNU make remakes the makefiles it
# includes before it builds any goal, and restarts, so the packages are in
# place before the first compiler runs under any -j and for any goal
# (`make -j2 all` once compiled dtcap_read.c beside apt-get and found no
# zstd.h).  Order-only prerequisites on the programs were not enough: the
# objects under them were free to build in parallel with this step.
DEPS_STAMP := $(B)/.deps-stamp
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(B) && echo '# packages installed by scripts/install-deps.sh' >$@
ifneq ($(filter-out clean distclean,$(or $(MAKECMDGOALS),all)),)
include $(DEPS_STAMP)
endif
