#!/usr/bin/env bash
# go-test-race.sh GO TESTFLAGS... -- PACKAGES...
#
# Runs `go test` (make test passes -race) and, when it fails, reruns once the
# packages whose test binary died of a fault inside the race detector's own
# runtime rather than of a failing test.
#
# Why: Go 1.26's race runtime (ThreadSanitizer) occasionally dereferences a
# goroutine's detached thread slot (__tsan::SlotLock on a null slot) in
# programs that run many testing/synctest bubbles; see golang/go#78156. A
# fault outside any goroutine's own code (in the runtime or in C code: the
# race runtime is the only C in Cuttle's tests) makes Go print
# "SIGSEGV: segmentation violation" then "PC=..." (runtime/signal_unix.go,
# fatalsignal), or "fatal error: unexpected signal during runtime
# execution". A failing test or a fault in Cuttle's own Go code, unsafe
# included, prints "--- FAIL" or "panic: runtime error: ... [signal ...]"
# instead, and is never retried. A package that crashes again on the rerun
# fails the run.
set -uo pipefail

go_cmd=$1
shift
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	flags+=("$1")
	shift
done
shift # the --
pkgs=("$@")

log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$go_cmd" test "${flags[@]}" "${pkgs[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && exit 0

# Split the output into each package's block (go test prints a package's
# output together, ending with its "ok"/"FAIL"/"?" line) and sort the failed
# packages into runtime crashes and real failures.
crashed=$(awk '
	/^(ok|FAIL|\?)[ \t]+[^ \t]+/ && NF >= 2 && $2 ~ /\// {
		if ($1 == "FAIL") print ($2 "\t" (crash ? "crash" : "fail"))
		crash = 0
		next
	}
	/^fatal error: unexpected signal during runtime execution/ { crash = 1 }
	/^SIGSEGV: segmentation violation$/ { segv = 1; next }
	/^PC=0x/ && segv { crash = 1 }
	{ segv = 0 }
' "$log")

if [ -z "$crashed" ] || printf '%s\n' "$crashed" | grep -q $'\tfail$'; then
	exit "$rc"
fi

retry=$(printf '%s\n' "$crashed" | cut -f1)
echo
echo "go-test-race: the race runtime crashed (not a test failure; golang/go#78156) in:"
printf '  %s\n' $retry
echo "go-test-race: running those packages once more"
"$go_cmd" test "${flags[@]}" $retry
