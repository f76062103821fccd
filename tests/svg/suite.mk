# tests/svg: the flame graph SVG's script in headless Chromium, driven over
# the DevTools protocol with real mouse events: zoom, hover, search (checked
# against the folded counts), URL state.  Screenshots are left in
# build/results/ (svg-flame.png, svg-diff.png) for people to look at.
SUITES += svg

check-svg: $(B)/asan/bin/dtreport $(B)/tests/report/mkcap
	@B=$(B) DTREPORT=$(B)/asan/bin/dtreport \
		tests/run-suite.sh $(B)/results svg tests/svg/run.sh
