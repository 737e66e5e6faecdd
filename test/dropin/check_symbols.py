#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The symbols of droce's shared libraries.

  check_symbols.py exports LIBDROCE HEADER API_SYMBOLS_PY
      libdroce.so.0 exports exactly the functions include/droce.h declares
      (api_symbols.py's list), all in version DROCE_0, nothing else.
  check_symbols.py versions DROPIN SYSTEM_LIB [--all]
      every symbol the drop-in (libibverbs.so.1, librdmacm.so.1) exports is
      in the version it has in the system's (rdma-core 44) library, and the
      drop-in defines every version node the system's defines (programs
      require them); with --all it also exports every symbol the system's
      does (librdmacm: each unsupported call fails with ENOSYS).
Exit 0 when all holds; prints each mismatch.
"""
import re
import subprocess
import sys


def dynsyms(lib):
    """{(name, version)} of the defined dynamic symbols, and the version nodes."""
    out = subprocess.run(["objdump", "-T", lib], check=True, capture_output=True,
                         text=True).stdout
    syms, nodes = set(), set()
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ .{7} (\S+)\s+[0-9a-f]+\s+(\(?[\w.]+\)?)\s+(\S+)$", line)
        if not m:
            continue
        section, version, name = m.groups()
        if section == "*UND*":
            continue
        if section == "*ABS*" and name == version.strip("()"):
            nodes.add(name)
            continue
        syms.add((name, version))
    return syms, nodes


def version_nodes(lib):
    out = subprocess.run(["readelf", "-V", "--wide", lib], check=True, capture_output=True,
                         text=True).stdout
    sect = out.split("Version definition section", 1)
    if len(sect) < 2:
        return set()
    body = sect[1].split("Version needs section", 1)[0]
    return set(re.findall(r"Name: (\S+)", body))


def check_exports(lib, header, api_py):
    api = subprocess.run([sys.executable, api_py, header, "--list"], check=True,
                         capture_output=True, text=True).stdout.split()
    syms, _ = dynsyms(lib)
    bad = 0
    want = {(n, "DROCE_0") for n in api}
    for s in sorted(syms - want):
        print(f"exported but not declared in droce.h (DROCE_0): {s}")
        bad += 1
    for s in sorted(want - syms):
        print(f"declared in droce.h but not exported: {s}")
        bad += 1
    print(f"libdroce.so.0: {len(syms)} symbols, droce.h declares {len(api)}")
    return bad


def check_versions(dropin, system, complete=False):
    mine, _ = dynsyms(dropin)
    real, _ = dynsyms(system)
    bad = 0
    for name, version in sorted(mine):
        if (name, version) not in real:
            where = sorted(v for n, v in real if n == name)
            print(f"{name}@{version}: rdma-core has it as {where or 'nothing'}")
            bad += 1
    for name, version in sorted(real - mine if complete else ()):
        print(f"{name}@{version}: exported by rdma-core, not by the drop-in")
        bad += 1
    missing = version_nodes(system) - version_nodes(dropin)
    for node in sorted(missing):
        print(f"version node {node} missing from the drop-in")
        bad += 1
    print(f"drop-in: {len(mine)} symbols, all in rdma-core's versions: {bad == 0}")
    return bad


def main(argv):
    if len(argv) == 5 and argv[1] == "exports":
        return 1 if check_exports(*argv[2:]) else 0
    if len(argv) in (4, 5) and argv[1] == "versions" and argv[4:] in ([], ["--all"]):
        return 1 if check_versions(argv[2], argv[3], argv[4:] == ["--all"]) else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
