#!/usr/bin/env bash
# Runs the quick checks (scripts/lint.sh quick) and every test: the packages with
# `go test`, and cmd/obsbench's end-to-end tests as separate processes of
# one test binary, several at a time. Most of those tests measure for a
# fixed time, so they overlap well even on two cores; one process per test
# also keeps what is global to a process (TMPDIR, signal handlers, the
# journals' "writer alive" check) apart, which t.Parallel inside one
# process would not.
#
#   scripts/test.sh            run everything (make test)
#   JOBS=n scripts/test.sh     n cmd/obsbench tests at a time (default 4)
#
# The queue starts with the tests that took longest (scripts/test-order.txt,
# one name per line; a test not named there runs after them), so the
# slowest do not start last.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
# Four, not more: six at a time starved the timed tests whose checks need
# the CPU (below) even at the normal priority.
JOBS=${JOBS:-4}
# -trimpath keeps the checkout's directory out of the build: a fresh clone
# in a new directory reuses what Go's build cache holds from earlier builds
# instead of compiling every package of the module again, beside the tests.
# The test binaries carry no DWARF debugging data (a panic's stack trace
# reads the binary's own line table, not DWARF): on a cold build cache
# the end-to-end tests' binary takes a tenth less CPU to build.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath -gcflags=all=-dwarf=false -ldflags=-w"
# The tests' servers live in $TMPDIR. Where /dev/shm is a tmpfs that
# allows programs to run, TMPDIR is a directory there: on ext4, creating
# the thousands of files of a server started and removed moments after
# many others costs more CPU than the server's own work in the test (the
# inode allocator steps over every recently deleted inode), and on this
# suite's two cores CPU is its time.
if grep -E '^\S+ /dev/shm tmpfs ' /proc/mounts | grep -qvE '[ ,]noexec[ ,]'; then
	work=$(mktemp -d /dev/shm/obt-XXXXXX)
else
	work=$(mktemp -d /tmp/obt-XXXXXX)
fi
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"; [ -z "${acct:-}" ] || rmdir "$acct"-* 2>/dev/null' EXIT
# Others may pass through $work to their own directories in t, as in
# /tmp, but not list or read it.
chmod 711 "$work"
# (Short names: a server's unix socket is in a directory in TMPDIR,
# whose path may have at most 107 bytes.)
mkdir -m 1777 "$work/t" && export TMPDIR="$work/t"
# Managed PostgreSQL servers start from a copy of one initdb
# (internal/engine/postgres/template.go), each with a password of its own.
mkdir -m 700 "$work/templates" && export OBSBENCH_INITDB_TEMPLATES="$work/templates"

# The quick checks beside everything else (make lint runs all of them).
GO=$GO ./scripts/lint.sh quick > "$work/lint.log" 2>&1 &
lintpid=$!

# The end-to-end tests' binary first, before the packages start: the
# queue is the longest part of the run, and on a machine whose build cache
# is cold it waited for this build while the packages compiled beside it.
# The packages compile little more after it (their own tests).
$GO test -c -o "$work/cmd.test" ./cmd/obsbench || exit 1
(cd cmd/obsbench && "$work/cmd.test" -test.list '.*') | grep '^Test' > "$work/all" || exit 1

# The packages, two at a time as go test does on two cores, beside the
# queue. go test starts them in the order given: the longest first, so
# that none of them is left running alone at the end.
longest="internal/engine/postgres internal/engine/mariadb internal/app internal/capture internal/driver internal/analysis internal/experiment"
mod=$($GO list -m)
pkgs=$({
	for p in $longest; do echo "$mod/$p"; done
	$GO list ./... | grep -v '/cmd/obsbench$'
} | awk '!seen[$0]++')
# The packages' long tests of fixed work, minutes of CPU under valgrind,
# run in a process of their own at the end-to-end queue's timed tests'
# priority: at the normal one, beside the other packages, they left those
# tests too little CPU to measure anything.
heavy="internal/app:TestInstructionsRecoverCalibrationMix"
skip=$(for h in $heavy; do printf '%s|' "^${h#*:}\$"; done)
t0=$(date +%s)
(
	$GO test -count=1 -timeout 50m -skip "${skip%|}" $pkgs > "$work/pkgs.log" 2>&1
	code=$?
	echo "packages: $(($(date +%s) - t0))s" >> "$work/pkgs.log"
	exit $code
) &
pkgpid=$!
(
	code=0
	for h in $heavy; do
		name=${h#*:}
		log="$work/heavy-$name.log"
		# A name that matches no test would pass with nothing run.
		if nice -n 10 $GO test -v -count=1 -timeout 30m -run "^$name\$" "./${h%%:*}" > "$log" 2>&1 &&
			grep -q "^--- PASS: $name " "$log"; then
			echo "ok    ${h%%:*} $(grep "^--- PASS: $name " "$log" | sed 's/^--- PASS: //')" >> "$work/heavy.log"
		else
			echo "FAIL  ${h%%:*} $name" >> "$work/heavy.log"
			cat "$log" >> "$work/heavy.log"
			code=1
		fi
	done
	echo "heavy tests (nice 10): $(($(date +%s) - t0))s" >> "$work/heavy.log"
	exit $code
) &
heavypid=$!

{
	grep -xFf "$work/all" scripts/test-order.txt
	grep -vxFf scripts/test-order.txt "$work/all"
} > "$work/queue"
if stale=$(grep -vxFf "$work/all" scripts/test-fixed-work.txt); then
	echo "scripts/test-fixed-work.txt names tests cmd/obsbench does not have:" $stale
	exit 1
fi

# Most of the queue's tests measure for a fixed time and take whatever CPU
# they are given; the tests of fixed work (scripts/test-fixed-work.txt:
# rounds of fixed work, counted runs, replays) take as long as their CPU
# lasts. Those run at the normal priority and the rest at nice 10, so the
# timed tests do not stretch the fixed-work ones beside them. (A nice value
# reaches a test's own processes and its MariaDB servers, not its
# PostgreSQL servers: pg_ctl starts each in a session of its own, and where
# the kernel weighs sessions apart (autogroup, Debian's default) each gets
# a full share. A group of low CPU weight for each timed test and its
# servers was tried: the suite took no less time, its CPU went elsewhere,
# and a sink that must fall behind no longer did.) So do the
# timed tests whose check needs the CPU: a known cost recovered by duet
# (at nice 10 its twins' servers got as little as 0.2 of their 0.5 CPU),
# and a lossy audit sink that must lose records (only statements that
# outrun its reader's 1 MiB/s fill its pipe: at nice 10 four sessions ran
# 1,666 a second, and none was lost),
# a wait sampler that must see a standby's waits, and a sweep of loads
# whose higher load must run faster (each load's rate comes from a probe
# of its own, which a starved moment reads low). So do tests of
# little CPU that at nice 10 wait their turn behind the timed ones, taking
# several times as long as alone: the outsider's attempts to get in, and
# a study at a fixed rate.
export normal="TestCalibrateDuet TestStudyAuditLossyFails TestStudySyncCommit TestOtherAccountsKeptOut TestStudySyncCommitMariaDB TestLoadSweepMariaDB"
# Where cgroup v2 is mounted beside v1's cpu controller (which obsbench's
# own groups use there), each test runs in a v2 group of its own, and its
# line says the CPU all its processes used, servers included (they leave
# the test's process tree, not its group): on two cores that, more than
# its time, is what a test costs the others.
acct=""
if [ -w /sys/fs/cgroup/unified/cgroup.procs ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	acct=/sys/fs/cgroup/unified/$(basename "$work")
fi
export acct
one() { # one test of cmd/obsbench, in its own process
	local name=$1 start end code nice=10 group="" cpu=""
	if grep -qxF "$name" scripts/test-fixed-work.txt || [[ " $normal " == *" $name "* ]]; then
		nice=0
	fi
	if [ -n "$acct" ] && mkdir "$acct-$name" 2>/dev/null; then
		group=$acct-$name
	fi
	start=$(date +%s)
	(
		[ -z "$group" ] || echo $BASHPID > "$group/cgroup.procs"
		cd cmd/obsbench && exec nice -n $nice "$work/cmd.test" -test.v -test.count=1 -test.timeout 30m -test.run "^${name}\$" > "$work/$name.log" 2>&1
	)
	code=$?
	end=$(date +%s)
	if [ -n "$group" ]; then
		cpu=", $(awk '/^usage_usec/ { printf "%d", $2 / 1e6 }' "$group/cpu.stat") CPU-s"
		rmdir "$group" 2>/dev/null
	fi
	if [ $code -eq 0 ] && ! grep -q '^--- SKIP' "$work/$name.log"; then
		echo "ok    cmd/obsbench $name $((end - start))s$cpu"
		# A test that measured again passed on a later try: what the
		# earlier ones saw, which a passing test's log would take along.
		grep -E '^ +[a-z_]+_test\.go:[0-9]+: (try [0-9]+:|.* again)' "$work/$name.log" | cut -c1-300 | sed 's/^ */      /' || true
	elif [ $code -eq 0 ]; then
		echo "skip  cmd/obsbench $name: $(grep -B1 '^--- SKIP' "$work/$name.log" | head -1 | sed 's/^ *//')"
	else
		echo "FAIL  cmd/obsbench $name $((end - start))s$cpu"
		cat "$work/$name.log"
		return 1
	fi
}
export -f one
export work
start=$(date +%s)
xargs -a "$work/queue" -P "$JOBS" -I{} bash -c 'one "$@"' _ {}
cmdcode=$?
wait $pkgpid
pkgcode=$?
wait $heavypid || pkgcode=1
wait $lintpid
lintcode=$?
cat "$work/pkgs.log" "$work/heavy.log"
echo "cmd/obsbench: $(wc -l < "$work/queue") tests, $JOBS at a time, $(($(date +%s) - start))s"
if [ $lintcode -ne 0 ]; then
	echo "FAIL  lint (scripts/lint.sh quick):"
	cat "$work/lint.log"
fi
[ $cmdcode -eq 0 ] && [ $pkgcode -eq 0 ] && [ $lintcode -eq 0 ]
