# Installs missing Debian packages once per build tree.
DEPS_STAMP := $(B)/.deps-stamp
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(B) && touch $@
