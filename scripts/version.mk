# The one version of the tree: every tool's --version and the tool_version
# every capture records.  The VERSION file names the release; where the
# tree is a git checkout, the commit follows as semver build metadata
# (0.1.0+ge9db12f, .dirty for uncommitted changes), so two captures of
# different commits never claim the same version.  Without git (a release
# tarball, a machine without it) the release alone: the build never needs
# git.  The value is kept in a file rewritten only when it changes, so the
# objects that compile it in rebuild exactly then: its rule runs every
# time (FORCE) but leaves the file, and its time, alone when the value is
# the same, and nothing is written while make parses.
DT_RELEASE := $(shell cat $(TOP)/VERSION 2>/dev/null)
DT_COMMIT := $(shell git -C $(TOP) describe --always --dirty --exclude='*' 2>/dev/null | tr - .)
DT_VERSION := $(or $(DT_RELEASE),unknown)$(if $(DT_COMMIT),+g$(DT_COMMIT))
DT_VERSION_FILE := $(B)/dt-version
$(DT_VERSION_FILE): FORCE
	@mkdir -p $(@D)
	@echo '$(DT_VERSION)' | cmp -s - $@ || echo '$(DT_VERSION)' >$@
.PHONY: FORCE
FORCE:
DT_VERSION_OBJS := $(foreach t,obj asan/obj tsan/obj,$(B)/$(t)/formats/dtcap_host.o $(B)/$(t)/cli/lib/util.o)
$(DT_VERSION_OBJS): $(DT_VERSION_FILE)
$(DT_VERSION_OBJS): CFLAGS_BASE += -DDT_VERSION='"$(DT_VERSION)"'

# make print-version: what the build compiles in (tests compare captures to it)
.PHONY: print-version
print-version: $(DT_VERSION_FILE)
	@echo '$(DT_VERSION)'
