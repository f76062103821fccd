# tests/: each area's suites live in their own fragment.
include tests/*/suite.mk
