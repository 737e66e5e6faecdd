#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A program built with nothing but `pkg-config --cflags --libs droce` (the
# build tree's uninstalled droce.pc): it sees include/droce.h and no
# internal header, links libdroce.so.0 and runs (a context without EAL:
# PD, MR, dereg, close, each result checked).
#   pkgconfig_build.sh BUILD_DIR CC
set -euo pipefail
build=$1 cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH="$build/meson-uninstalled"
read -r -a flags <<< "$(pkg-config --cflags --libs droce)"
cat > "$tmp/app.c" <<'EOC'
#include <stdio.h>
#include <droce.h>
int main(void)
{
	static char buf[4096];
	struct droce_context *ctx = droce_open_context(NULL);
	struct droce_pd *pd = ctx != NULL ? droce_alloc_pd(ctx) : NULL;
	struct droce_mr *mr = pd != NULL ?
		droce_reg_mr(pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE) : NULL;

	if (mr == NULL || mr->lkey != mr->rkey || mr->length != sizeof(buf))
		return 1;
	if (droce_dereg_mr(mr) != 0 || droce_dealloc_pd(pd) != 0 ||
	    droce_close_context(ctx) != 0)
		return 2;
	printf("pkg-config app: ok\n");
	return 0;
}
EOC
"$cc" -std=c11 -Wall -Werror -o "$tmp/app" "$tmp/app.c" "${flags[@]}"
# the libraries' private headers stay out of sight
for h in prot.h transport.h verbs_private.h device_private.h roce_hdr.h; do
	if echo "#include <$h>" | "$cc" -E -x c - "${flags[@]}" > /dev/null 2>&1; then
		echo "FAIL: $h is visible through droce.pc's Cflags" >&2
		exit 1
	fi
done
out=$(LD_LIBRARY_PATH="$build/lib/shlib" "$tmp/app")
[[ $out == "pkg-config app: ok" ]] || { echo "FAIL: app printed '$out'" >&2; exit 1; }
# (ldd's output taken whole: grep -q would stop reading, and the SIGPIPE
# fail the pipeline under pipefail)
libs=$(LD_LIBRARY_PATH="$build/lib/shlib" ldd "$tmp/app")
if [[ $libs =~ libdroce\.so\.0\ =\>\ [^[:space:]]*lib/shlib/libdroce\.so\.0 ]]; then
	echo "ok: built from droce.pc alone, linked to libdroce.so.0, ran"
else
	echo "FAIL: app not linked to the build's libdroce.so.0" >&2
	echo "$libs" >&2
	exit 1
fi
