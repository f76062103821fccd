# vm.sh - runs inside the VM (tests/vm/run.sh --script) for the vm-dtsh
# suite: dtsh live on /dev/dt.  /bin/dtsh and /bin/ptydrive are static.
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
# vm-run.sh copies in this terminfo entry (libedit wants one).
export TERM=dumb
cd /tmp || exit 1
# Pseudo-terminals for ptydrive: the harness mounts no devpts.
mkdir -p /dev/pts
mount -t devpts -o ptmxmode=0666 devpts /dev/pts 2>/dev/null
[ -e /dev/ptmx ] || ln -s pts/ptmx /dev/ptmx

if [ -c /dev/dt ]; then pass device; else fail device "no /dev/dt"; fi

# ---- probes and describe from the device
dtsh -c 'probes syscall:getppid*' >p.out 2>p.err
rc=$?
if [ $rc = 0 ] && grep -qx 'syscall:getppid:entry' p.out && grep -qx 'syscall:getppid:return' p.out; then
	pass live-probes
else
	fail live-probes "rc=$rc: $(cat p.out p.err)"
fi
dtsh -c 'describe syscall:getppid:return' >d.out 2>d.err
rc=$?
if [ $rc = 0 ] && grep -q '^syscall:getppid:return' d.out && grep -q 'return' d.out; then
	pass live-describe
else
	fail live-describe "rc=$rc: $(cat d.out d.err)"
fi
dtsh -c 'describe syscall:getppd:entry' >d.out 2>d.err
if [ $? != 0 ] && grep -q 'did you mean.*syscall:getppid:entry' d.err; then
	pass live-unknown-probe-suggests
else
	fail live-unknown-probe-suggests "$(cat d.out d.err)"
fi
dtsh -c 'enable syscall:getppd:entry' >d.out 2>d.err
if [ $? != 0 ] && grep -q "getppid" d.err; then
	pass live-enable-unknown
else
	fail live-enable-unknown "$(cat d.out d.err)"
fi

# ---- record 2s from a script on stdin, then analyse it in the same shell
ptydrive getppid 4 >g.out 2>&1 &
gp=$!
printf '%s\n' 'enable syscall:getppid:entry' 'record 2s -o /out/x.dtc' 'stats' \
	'top 3 by syscall' 'sql SELECT count(*) AS n FROM events' | dtsh >r.out 2>r.err
rc=$?
wait $gp
cp r.out r.err /out/ 2>/dev/null
if [ $rc = 0 ] && [ -s /out/x.dtc ]; then
	pass record-2s
else
	fail record-2s "rc=$rc: $(cat r.out r.err)"
fi
if grep -q 'syscall:getppid:entry' r.out && grep -q 'getppid' r.out; then
	pass record-then-stats
else
	fail record-then-stats "$(cat r.out)"
fi
n=$(awk '/^ *n *$/ { getline; getline; print $1 }' r.out)
if [ -n "$n" ] && [ "$n" -gt 1000 ] 2>/dev/null; then
	pass record-2s-events
else
	fail record-2s-events "count [$n]: $(cat r.out)"
fi

# ---- Ctrl-C on a terminal ends `record 60s`, keeps the events, shell lives
cat >ctrlc.pty <<'EOF'
expect 20 dt live>
send enable profile:hz:997\n
expect 10 dt live>
send record 60s -o /out/c.dtc\n
sleep 3000
send \x03
expect 1 dt c.dtc>
send sql SELECT count(*) AS kept FROM events;\n
expect 20 kept
expect 20 dt c.dtc>
send quit\n
wait 10
EOF
start=$(date +%s)
ptydrive ctrlc.pty /out/ctrlc.log dtsh >ctrlc.out 2>&1
rc=$?
took=$(( $(date +%s) - start ))
cat ctrlc.out
if [ $rc = 0 ] && grep -q 'ok exit status 0' ctrlc.out; then
	pass ctrl-c-record-prompt-within-1s
else
	fail ctrl-c-record-prompt-within-1s "rc=$rc: $(cat ctrlc.out; tail -c 1500 /out/ctrlc.log)"
fi
if [ $took -lt 40 ]; then pass ctrl-c-record-not-60s; else fail ctrl-c-record-not-60s "took ${took}s"; fi
kept=$(dtsh -c 'sql --csv SELECT count(*) FROM events' /out/c.dtc 2>&1 | tr -d '\r' | tail -1)
if [ -n "$kept" ] && [ "$kept" -gt 0 ] 2>/dev/null; then
	pass ctrl-c-record-kept-events
else
	fail ctrl-c-record-kept-events "count [$kept]"
fi

# ---- a script: SIGINT ends the recording, the next commands still run
printf '%s\n' 'enable profile:hz:97' 'record 60s -o /out/s.dtc' 'stats' >s.in
start=$(date +%s)
dtsh <s.in >s.out 2>s.err &
dp=$!
sleep 3
kill -INT $dp
wait $dp
rc=$?
took=$(( $(date +%s) - start ))
if [ $rc = 0 ] && [ $took -lt 15 ] && grep -q 'profile:hz:97' s.out; then
	pass sigint-script-record-then-stats
else
	fail sigint-script-record-then-stats "rc=$rc took ${took}s: $(cat s.out s.err)"
fi
exit 0
