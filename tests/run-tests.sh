#!/usr/bin/env bash
# The test runner: every test binary, script and node test file given, JOBS at a time,
# each under a timeout of its own, then the slowest ten and one closing line
# "tests: N passed, N failed[, N skipped] in S s". Exit 1 on any failure.
#
# Usage: run-tests.sh BUILD_DIR BIN... -- SCRIPT...
#   a SCRIPT is a *.test.sh (run with bash) or a *.test.mjs (node's test runner)
#
# Each test runs
# - in a session and process group of its own, with a temporary directory of its own
#   (TMPDIR, removed afterwards) and its output in BUILD_DIR/test-logs/NAME.log; the log
#   is printed when the test fails. The temporary directories are short paths under one
#   root outside the checkout (TEST_TMPROOT, default a fresh /tmp/pt-XXXXXX, removed at the
#   end): a Unix socket's path is limited to 107 bytes, and Chromium (for one) makes its
#   own under TMPDIR, so a deep checkout must not lengthen them;
# - under a timeout: TEST_TIMEOUT seconds (default 120), or what the test declares in a
#   header line "# timeout: SECONDS (why)" ("// timeout: ..." in a .mjs file); times 2
#   for the sanitizer build (ASan + UBSan run the same code 2-3x slower), and times 1 +
#   the load beyond the runner's own per core when a test starts ((1-minute load average
#   - JOBS) / nproc, rounded up; 1 to 4 in all): a timeout bounds a hang, and a machine
#   that other work loads twice over runs every test about half as fast
#   (TEST_TIMEOUT_SCALE=N fixes the factor). On timeout the
#   runner prints the test's name and its last lines and kills every process the test
#   started: its process group, every descendant (also those in process groups of their
#   own: a daemon, nginx, node, Chromium) and every process carrying the test's
#   PT_TEST_TAG in its environment (one that was orphaned);
# - with those processes killed after it ends, too, so that nothing it started is left
#   listening; such leftovers are named in the output.
# A test may declare "# sanitize: skip (why)": it is skipped in the sanitizer build
# (it runs no code of ours that the other tests do not run under the sanitizers there).
#
# Environment: JOBS (default 3), TEST_TIMEOUT (default 120), TEST_TIMEOUT_SCALE (default
# from the load, above), TEST_FILTER (a grep -E pattern on the test names: run only those).
set -u
build="$1"; shift
bins=(); scripts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
for s in "$@"; do [ -n "$s" ] && scripts+=("$s"); done
jobs="${JOBS:-3}"
base_timeout="${TEST_TIMEOUT:-120}"
san=0
case "$build" in *san*) san=1 ;; esac

export PT_BUILD="$build" PT_ROOT="$(pwd)"
export CMOCKA_MESSAGE_OUTPUT=stdout
logs="$build/test-logs"
# absolute and short (see above); TEST_TMPROOT is emptied first and left empty, a root
# made here is removed at the end
if [ -n "${TEST_TMPROOT:-}" ]; then
	tmproot="$TEST_TMPROOT" own_tmproot=0
	rm -rf "$tmproot"; mkdir -p "$tmproot"
else
	tmproot="$(mktemp -d /tmp/pt-XXXXXX)" own_tmproot=1
fi
trap '[ "$own_tmproot" = 0 ] || rm -rf "$tmproot"' EXIT
times_file="$build/test-times.txt" # the last run's times, to start the slowest first
rm -rf "$logs"
mkdir -p "$logs"

# The tests: name, then the command's kind (bin, sh, mjs).
names=(); kinds=()
for t in "${bins[@]}"; do names+=("$t"); kinds+=(bin); done
for s in "${scripts[@]}"; do
	case "$s" in
	*.mjs) kinds+=(mjs) ;;
	*) kinds+=(sh) ;;
	esac
	names+=("$s")
done
if [ -n "${TEST_FILTER:-}" ]; then
	n2=(); k2=()
	for i in "${!names[@]}"; do
		if echo "${names[$i]}" | grep -qE "$TEST_FILTER"; then n2+=("${names[$i]}"); k2+=("${kinds[$i]}"); fi
	done
	names=("${n2[@]}"); kinds=("${k2[@]}")
fi

# header NAME KEY: the value of a "# KEY: value" or "// KEY: value" line in the test's
# first 30 lines (scripts only).
header() {
	[ -f "$1" ] || return 0
	head -n 30 "$1" | sed -nE "s@^(#|//) *$2: *([^ ]+).*@\2@p" | head -n 1
}

# Order: the slowest of the last run first (so that the long ones do not end the run
# alone), the rest after them in the order given.
order=()
if [ -f "$times_file" ]; then
	while read -r _ name; do
		for i in "${!names[@]}"; do [ "${names[$i]}" = "$name" ] && order+=("$i"); done
	done < <(sort -rn "$times_file")
fi
for i in "${!names[@]}"; do
	case " ${order[*]} " in *" $i "*) ;; *) order+=("$i") ;; esac
done

# descendants PID...: every descendant of the given processes (by parent links).
descendants() {
	ps -e -o pid=,ppid= | awk -v roots="$*" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) want[r[i]] = 1 }
		{ parent[$1] = $2; pids[++m] = $1 }
		END {
			do { grew = 0
				for (i = 1; i <= m; i++) { p = pids[i]
					if (!(p in want) && (parent[p] in want)) { want[p] = 1; grew = 1 } }
			} while (grew)
			for (p in want) if (p in parent) print p
		}'
}

# tagged TAG: the processes whose environment carries PT_TEST_TAG=TAG.
tagged() {
	grep -lsaz "^PT_TEST_TAG=$1\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}

# reap_all PID TAG: kills the test's process group, its descendants and its tagged
# processes (TERM, then KILL what is left after 2 s); prints what it found alive.
reap_all() {
	local pid="$1" tag="$2" left
	left=$( { descendants "$pid"; tagged "$tag"; } | sort -un | grep -vx "$$" || true)
	kill -TERM -- -"$pid" 2>/dev/null
	[ -n "$left" ] || return 0
	kill -TERM $left 2>/dev/null
	for _ in $(seq 20); do
		local alive=""
		for p in $left; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
		[ -n "$alive" ] || break
		sleep 0.1
	done
	kill -KILL -- -"$pid" 2>/dev/null
	kill -KILL $left 2>/dev/null
	echo "$left"
}

pass=0; fail=0; skip=0
failed=(); times=()
declare -A pid_of start_of limit_of idx_of tag_of
running=()
t_all=$SECONDS
seq_no=0

# The timeouts' factor for the machine's load (header): TEST_TIMEOUT_SCALE, or 1 + the
# 1-minute load average beyond JOBS per core, rounded up, within [1, 4].
ncpu="$(nproc 2>/dev/null || echo 1)"
load_factor() {
	if [ -n "${TEST_TIMEOUT_SCALE:-}" ]; then
		echo "$TEST_TIMEOUT_SCALE"
		return
	fi
	awk -v n="$ncpu" -v j="$jobs" '{
		x = ($1 - j) / n; f = int(x); if (f < x) f++; f++
		print (f < 1 ? 1 : (f > 4 ? 4 : f)) }' /proc/loadavg 2>/dev/null || echo 1
}

start_test() {
	local i="$1" name="${names[$1]}" kind="${kinds[$1]}"
	local safe="${name//\//_}" limit
	if [ "$san" = 1 ] && [ -n "$(header "$name" sanitize)" ]; then
		echo "-- $name: skipped in the sanitizer build $(head -n 30 "$name" | sed -nE 's@^(#|//) *sanitize: *skip *@@p' | head -n 1)"
		skip=$((skip + 1))
		return
	fi
	limit="$(header "$name" timeout)"
	limit="${limit:-$base_timeout}"
	[ "$san" = 1 ] && limit=$((limit * 2))
	limit=$((limit * $(load_factor)))
	seq_no=$((seq_no + 1))
	local tag="run$$-$seq_no" tmp="$tmproot/$i"
	mkdir -p "$tmp"
	local cmd=()
	case "$kind" in
	bin) cmd=("$name") ;;
	sh) cmd=(bash "$name") ;;
	mjs) cmd=(node --experimental-websocket --no-warnings --test --test-concurrency=1
		--test-reporter=spec "$name") ;;
	esac
	TMPDIR="$tmp" PT_TEST_TAG="$tag" setsid "${cmd[@]}" >"$logs/$safe.log" 2>&1 </dev/null &
	local pid=$!
	pid_of[$name]=$pid; start_of[$name]=$SECONDS; limit_of[$name]=$limit; tag_of[$name]=$tag
	idx_of[$name]=$i
	running+=("$name")
}

# finish NAME RC LEFT: reports a test that ended (rc 124: its timeout); LEFT, the
# processes it left running (reap_all).
finish() {
	local name="$1" rc="$2" left="$3" safe="${1//\//_}" dt=$((SECONDS - ${start_of[$1]}))
	times+=("$dt $name")
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "-- $name: ok in $dt s"
	else
		fail=$((fail + 1)); failed+=("$name")
		if [ "$rc" -eq 124 ]; then
			echo "-- $name: TIMED OUT after ${limit_of[$name]} s; its last lines:"
			tail -n 30 "$logs/$safe.log" | sed 's/^/   | /'
		else
			echo "-- $name: FAILED (exit $rc) in $dt s; its output:"
			sed 's/^/   | /' "$logs/$safe.log"
		fi
	fi
	[ -z "$left" ] || echo "   ($name left processes running; killed: $(echo $left))"
	rm -rf "$tmproot/${idx_of[$name]}"
}

# Stop everything on Ctrl-C or TERM.
on_signal() {
	for n in "${running[@]}"; do reap_all "${pid_of[$n]}" "${tag_of[$n]}" >/dev/null; done
	echo "tests: interrupted"
	exit 130
}
trap on_signal INT TERM

echo "running ${#order[@]} tests, $jobs at a time (logs: $logs)"
next=0
while [ "$next" -lt "${#order[@]}" ] || [ "${#running[@]}" -gt 0 ]; do
	while [ "${#running[@]}" -lt "$jobs" ] && [ "$next" -lt "${#order[@]}" ]; do
		start_test "${order[$next]}"
		next=$((next + 1))
	done
	still=()
	for name in "${running[@]}"; do
		pid=${pid_of[$name]}
		if ! kill -0 "$pid" 2>/dev/null; then
			rc=0; wait "$pid" || rc=$?
			finish "$name" "$rc" "$(reap_all "$pid" "${tag_of[$name]}")"
		elif [ $((SECONDS - ${start_of[$name]})) -ge "${limit_of[$name]}" ]; then
			# the descendants are found while the test still holds them
			left=$(reap_all "$pid" "${tag_of[$name]}")
			wait "$pid" 2>/dev/null
			finish "$name" 124 "$left"
		else
			still+=("$name")
		fi
	done
	running=("${still[@]}")
	[ "${#running[@]}" -gt 0 ] && sleep 0.2
done

if [ "${#times[@]}" -gt 0 ]; then
	printf '%s\n' "${times[@]}" >"$times_file"
	echo "slowest:"
	printf '%s\n' "${times[@]}" | sort -rn | head -10 | awk '{printf "  %5d s  %s\n", $1, $2}'
fi
# Each failure again at the end, with its last lines: a log cut to its tail (CI's) still says why.
for f in "${failed[@]}"; do
	echo "FAILED: $f; its last lines (whole log: $logs/${f//\//_}.log):"
	tail -n 25 "$logs/${f//\//_}.log" | sed 's/^/   | /'
done
echo "tests: $pass passed, $fail failed$([ "$skip" -gt 0 ] && echo ", $skip skipped") in $((SECONDS - t_all)) s"
[ "$fail" -eq 0 ]
