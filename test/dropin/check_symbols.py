#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The symbols of droce's shared libraries.

  check_symbols.py exports LIBDROCE HEADER API_SYMBOLS_PY
      libdroce.so.0 exports exactly the functions include/droce.h declares
      (api_symbols.py's list), all in version DROCE_0, nothing else.
  check_symbols.py versions DROPIN SYSTEM_LIB
      the drop-in (libibverbs.so.1, librdmacm.so.1) and the system's
      (rdma-core 44) library export the same symbol@version list, both
      ways: every symbol at each of its versions, the default one
      (name@@VERSION) and the compat ones (name@VERSION, rdma-core's
      pre-1.1 ABI), none more; and define the same version nodes with the
      same parents (programs require them by name).
Exit 0 when all holds; prints each mismatch.
"""
import re
import subprocess
import sys


def dynsyms(lib):
    """{"name@@VERSION" (the default version) or "name@VERSION" (a compat
    one)} of the defined dynamic symbols, and {node: parent or None}, the
    version nodes the library defines."""
    out = subprocess.run(["readelf", "--dyn-syms", "--wide", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0][:-1].isdigit() or f[6] == "UND":
            continue
        name = f[7]
        if f[6] == "ABS" and "@" not in name:
            continue                    # a version node's own symbol
        syms.add(name if "@" in name else name + "@@(no version)")
    return syms, version_nodes(lib)


def version_nodes(lib):
    """{node: its parent (None: none)} of .gnu.version_d, the base (the
    soname) left out."""
    out = subprocess.run(["readelf", "-V", "--wide", lib], check=True, capture_output=True,
                         text=True).stdout
    sect = out.split("Version definition section", 1)
    if len(sect) < 2:
        return {}
    body = sect[1].split("Version needs section", 1)[0]
    nodes, last = {}, None
    for line in body.splitlines():
        m = re.search(r"Flags: (\S+)\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)", line)
        if m:
            last = None if m.group(1) == "BASE" else m.group(2)
            if last is not None:
                nodes[last] = None
            continue
        m = re.search(r"Parent 1: (\S+)", line)
        if m and last is not None:
            nodes[last] = m.group(1)
    return nodes


def check_exports(lib, header, api_py):
    api = subprocess.run([sys.executable, api_py, header, "--list"], check=True,
                         capture_output=True, text=True).stdout.split()
    syms, _ = dynsyms(lib)
    bad = 0
    want = {f"{n}@@DROCE_0" for n in api}
    for s in sorted(syms - want):
        print(f"exported but not declared in droce.h (DROCE_0): {s}")
        bad += 1
    for s in sorted(want - syms):
        print(f"declared in droce.h but not exported: {s}")
        bad += 1
    print(f"libdroce.so.0: {len(syms)} symbols, droce.h declares {len(api)}")
    return bad


def check_versions(dropin, system):
    """The drop-in exports exactly the system library's symbols, each at
    the same versions, default (@@) and compat (@) alike, and defines
    exactly its version nodes with the same parents."""
    mine, my_nodes = dynsyms(dropin)
    real, real_nodes = dynsyms(system)
    bad = 0
    for s in sorted(mine - real):
        name = s.split("@")[0]
        where = sorted(r for r in real if r.split("@")[0] == name)
        print(f"{s}: exported by the drop-in, not by rdma-core (which has {where or 'nothing'})")
        bad += 1
    for s in sorted(real - mine):
        print(f"{s}: exported by rdma-core, not by the drop-in")
        bad += 1
    for node in sorted(set(my_nodes) | set(real_nodes)):
        if my_nodes.get(node, "-") != real_nodes.get(node, "-"):
            print(f"version node {node}: drop-in {my_nodes.get(node, 'missing')} (parent), "
                  f"rdma-core {real_nodes.get(node, 'missing')}")
            bad += 1
    compat = sum(1 for s in real if "@@" not in s)
    print(f"drop-in: {len(mine)} symbols, rdma-core: {len(real)} ({compat} compat), "
          f"{len(real_nodes)} version nodes; identical: {bad == 0}")
    return bad


def main(argv):
    if len(argv) == 5 and argv[1] == "exports":
        return 1 if check_exports(*argv[2:]) else 0
    if len(argv) == 4 and argv[1] == "versions":
        return 1 if check_versions(argv[2], argv[3]) else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
