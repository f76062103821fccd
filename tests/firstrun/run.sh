#!/bin/bash
# tests/firstrun/run.sh - the first `make` on a fresh machine builds dt.ko.
#
# A copy of the tree (the working files, not build/) is built with an empty
# modules root (MODROOT) in which no kernel headers exist yet, and with
# scripts/install-deps.sh replaced by a stand-in that "installs" them: it
# creates MODROOT/KVER/build with a stub kbuild Makefile.  If anything looked
# up the kernel version while the makefiles were parsed (or before the deps
# step), the first run would use ".../modules//build" and fail, as issue 10
# item 17 saw.  Prints PASS/FAIL lines.
set -u
TOP=${TOP:?}
W=$(mktemp -d /tmp/dt-firstrun.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# fresh-tree NAME: a copy of the working tree in $W/NAME, modules root
# $W/NAME.mod (empty), install log $W/NAME.log.
fresh_tree() {
	local t=$W/$1
	mkdir -p "$t" "$t.mod"
	: >"$t.log"
	# the working files (a git checkout), else everything but build outputs
	if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$TOP" && git ls-files -co --exclude-standard -z | grep -zv '^build/' |
			xargs -0 tar cf - 2>/dev/null) | tar xf - -C "$t" || return 1
	else
		(cd "$TOP" && tar cf - --exclude=./build --exclude=./out .) | tar xf - -C "$t" || return 1
	fi
	[ -f "$t/Makefile" ] && [ -f "$t/kernel/kernel.mk" ] || return 1
	cat >"$t/scripts/install-deps.sh" <<'EOS'
#!/bin/sh
# Stand-in for the real installer: the headers exist from now on.
set -eu
echo "install-deps" >>"$FIRSTRUN_LOG"
kd=$FIRSTRUN_MODROOT/6.1.0-99-cloud-amd64/build
mkdir -p "$kd"
cat >"$kd/Makefile" <<'EOM'
modules:
	@echo "kbuild $(CURDIR)" >>"$(FIRSTRUN_LOG)"
	@touch "$(M)/dt.ko" "$(M)/dt_kptarget.ko"
clean:
	@true
EOM
EOS
	chmod +x "$t/scripts/install-deps.sh"
}

# -------------------------------------------- first run: make dt.ko
fresh_tree a || { fail copy "cannot copy the tree"; exit 1; }
FIRSTRUN_LOG=$W/a.log FIRSTRUN_MODROOT=$W/a.mod \
	make -C "$W/a" --no-print-directory MODROOT="$W/a.mod" "$W/a/build/dt.ko" \
	>"$W/a.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -f "$W/a/build/dt.ko" ]; then
	pass first-make
else
	fail first-make "status $rc: $(grep -m3 -i 'error\|no such\|no kernel' "$W/a.out" | tr '\n' ' ')"
fi
if grep -q '//build' "$W/a.out"; then
	fail no-empty-kver "a kernel path without its version: $(grep -m1 '//build' "$W/a.out")"
else
	pass no-empty-kver
fi
# the install step ran first, and kbuild then ran in the headers it installed
order=$(tr '\n' '|' <"$W/a.log")
if [ "$order" = "install-deps|kbuild $W/a.mod/6.1.0-99-cloud-amd64/build|" ]; then
	pass deps-before-kbuild
else
	fail deps-before-kbuild "steps were: $order"
fi

# ------------------- the lookup is lazy: parsing alone must not need it
# With no headers at all and the install step never run, `make -n` of an
# unrelated target must not mention a kernel path (nothing expanded KDIR).
fresh_tree b || { fail copy "cannot copy the tree"; exit 1; }
make -C "$W/b" --no-print-directory -n MODROOT="$W/b.mod" "$W/b/build/bin/dtreport" \
	>"$W/b.out" 2>&1
if grep -q "$W/b.mod" "$W/b.out"; then
	fail parse-no-lookup "the modules root was read for a userland target: $(grep -m1 "$W/b.mod" "$W/b.out")"
else
	pass parse-no-lookup
fi
# ...and without headers, dt.ko fails with a message saying what to do
FIRSTRUN_LOG=$W/b.log FIRSTRUN_MODROOT=$W/b.mod \
	make -C "$W/b" --no-print-directory MODROOT="$W/b.mod/none" "$W/b/build/.deps-stamp" \
	"$W/b/build/dt.ko" >"$W/b2.out" 2>&1
if [ $? -ne 0 ] && grep -q 'no kernel headers under .*install-deps' "$W/b2.out"; then
	pass missing-headers-message
else
	fail missing-headers-message "$(tail -c 300 "$W/b2.out")"
fi

# ------------- under -j, no compiler runs before the install step ends
# `make -j2 all` on a fresh machine once compiled beside apt-get and found no
# zstd.h: the programs waited for the step, the objects under them did not.
# The stand-in installer here is slow, and every compile logs itself.
fresh_tree c || { fail copy "cannot copy the tree"; exit 1; }
sed -i 's/^echo "install-deps"/sleep 2; echo "install-deps"/' "$W/c/scripts/install-deps.sh"
cat >"$W/c.cc" <<'EOS'
#!/bin/sh
echo cc >>"$FIRSTRUN_LOG"
exec cc "$@"
EOS
chmod +x "$W/c.cc"
FIRSTRUN_LOG=$W/c.log FIRSTRUN_MODROOT=$W/c.mod \
	make -C "$W/c" --no-print-directory -j4 MODROOT="$W/c.mod" CC="$W/c.cc" \
	"$W/c/build/bin/dtcdump" >"$W/c.out" 2>&1
rc=$?
first=$(head -1 "$W/c.log" 2>/dev/null)
ncc=$(grep -c '^cc$' "$W/c.log" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$first" = install-deps ] && [ "${ncc:-0}" -gt 1 ]; then
	pass deps-before-cc-parallel
else
	fail deps-before-cc-parallel "status $rc, first step '$first', $ncc compiles: $(grep -m2 'rror:\|\*\*\*' "$W/c.out" | tr '\n' ' ')"
fi

# ------------------------------- parsing the makefiles writes nothing
# (the version file was once written by a $(shell ...) as make parsed: even
# `make -n`, which runs no recipe, created build/).  clean needs no deps
# step, so nothing but parsing happens here.
fresh_tree d || { fail copy "cannot copy the tree"; exit 1; }
(cd "$W/d" && find . -printf '%p %s %T@\n' | sort) >"$W/d.before"
make -C "$W/d" --no-print-directory -n MODROOT="$W/d.mod" clean >"$W/d.out" 2>&1
rc=$?
(cd "$W/d" && find . -printf '%p %s %T@\n' | sort) >"$W/d.after"
made=$(diff "$W/d.before" "$W/d.after" | sed -n 's/^> \([^ ]*\) .*/\1/p' | head -5 | tr '\n' ' ')
if [ $rc -eq 0 ] && [ ! -e "$W/d/build" ] && [ -z "$made" ]; then
	pass parse-writes-nothing
else
	fail parse-writes-nothing "status $rc; written: ${made:-none}$([ -e "$W/d/build" ] && echo ' (build/)')"
fi
exit 0
