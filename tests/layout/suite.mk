# tests/layout: the source tree keeps the shape doc/DESIGN.md describes.
SUITES += layout

check-layout: tests/layout/run.sh
	@tests/run-suite.sh $(B)/results layout tests/layout/run.sh $(TOP)
