# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by usertools/droce-demo and usertools/droce-test.
# Sourced, not run.  Callers set PROG and use `set -euo pipefail`.

DROCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DROCE_STATE_FILE=${DROCE_STATE_DIR:-/run/droce}/env
# Debian's python3 (the project installs it), not whatever python3 is first in PATH.
DROCE_PY=/usr/bin/python3
[[ -x $DROCE_PY ]] || DROCE_PY=python3
# Never more than this many parallel compile jobs (2-core machines).
DROCE_JOBS=${DROCE_JOBS:-2}

say()  { printf '%s: %s\n' "$PROG" "$*"; }
warn() { printf '%s: WARNING: %s\n' "$PROG" "$*" >&2; }
die()  { printf '%s: ERROR: %s\n' "$PROG" "$*" >&2; exit 1; }

# Section header, so long logs are easy to scan.
banner() { printf '\n==== %s: %s ====\n' "$PROG" "$*"; }

# Run usertools/droce-setup (no arguments) unless `droce-setup --check` says it is not needed.
droce_ensure_setup() {
	local setup=$DROCE_ROOT/usertools/droce-setup
	if "$setup" --check >/dev/null 2>&1; then
		say "setup: not needed, machine already prepared"
		return 0
	fi
	say "setup: running usertools/droce-setup"
	"$setup"
}

# Read the state file written by droce-setup and export DROCE_NO_HUGE=1 when
# hugepages are not available (or $1 is 1: forced by the caller).
droce_hugepage_env() {
	local force=${1:-0} ok=
	if [[ -r $DROCE_STATE_FILE ]]; then
		ok=$(sed -n 's/^DROCE_HUGEPAGES_OK=//p' "$DROCE_STATE_FILE")
	fi
	if (( force )); then
		export DROCE_NO_HUGE=1
		say "hugepages: not used (--no-huge): DROCE_NO_HUGE=1"
	elif [[ $ok == 1 ]]; then
		export DROCE_NO_HUGE=${DROCE_NO_HUGE:-0}
		say "hugepages: available ($(grep -h '^DROCE_HUGEPAGES=' "$DROCE_STATE_FILE"))"
	else
		export DROCE_NO_HUGE=1
		say "hugepages: not available (per $DROCE_STATE_FILE): DROCE_NO_HUGE=1"
	fi
}

# 0 if the meson build dir $1 already has every -Dkey=value given after it
# (and, if $2 is non-empty, uses the C compiler whose meson id is $2).
droce_build_matches() {
	local dir=$1 ccid=$2
	shift 2
	[[ -f $dir/build.ninja && -f $dir/meson-info/intro-buildoptions.json ]] || return 1
	"$DROCE_PY" - "$dir" "$ccid" "$@" <<'EOF'
import json, sys
d, ccid, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
def norm(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(map(str, v))
    return str(v)
try:
    opts = {o["name"]: norm(o["value"]) for o in json.load(open(d + "/meson-info/intro-buildoptions.json"))}
    if ccid:
        comp = json.load(open(d + "/meson-info/intro-compilers.json"))
        if comp.get("host", {}).get("c", {}).get("id") != ccid:
            sys.exit(1)
except (OSError, ValueError, KeyError):
    sys.exit(1)
for w in wanted:
    k, _, v = w[2:].partition("=")
    if opts.get(k) != v:
        sys.exit(1)
EOF
}

# droce_configure DIR CC [-Dopt=value...]: make DIR a meson build dir with
# these options.  CC empty = the default compiler.  Keeps an existing build
# dir when it already matches; reconfigures it otherwise (wipes it if the
# compiler must change).
droce_configure() {
	local dir=$1 cc=$2
	shift 2
	local ccid=
	[[ -n $cc ]] && ccid=$cc
	if droce_build_matches "$DROCE_ROOT/$dir" "$ccid" "$@"; then
		say "$dir: already configured with $*"
		return 0
	fi
	local env=()
	[[ -n $cc ]] && env=(env "CC=$cc")
	if [[ -f $DROCE_ROOT/$dir/build.ninja ]]; then
		if [[ -z $ccid ]] || droce_build_matches "$DROCE_ROOT/$dir" "$ccid"; then
			say "$dir: reconfiguring with $*"
			"${env[@]}" meson setup --reconfigure "$DROCE_ROOT/$dir" "$DROCE_ROOT" "$@" && return 0
		fi
		say "$dir: wiping and configuring again with ${cc:+CC=$cc }$*"
		"${env[@]}" meson setup --wipe "$DROCE_ROOT/$dir" "$DROCE_ROOT" "$@"
	else
		say "$dir: configuring with ${cc:+CC=$cc }$*"
		rm -rf "${DROCE_ROOT:?}/$dir"
		"${env[@]}" meson setup "$DROCE_ROOT/$dir" "$DROCE_ROOT" "$@"
	fi
}

# droce_compile DIR [TARGET...]
droce_compile() {
	local dir=$1
	shift
	meson compile -C "$DROCE_ROOT/$dir" -j "$DROCE_JOBS" "$@"
}
