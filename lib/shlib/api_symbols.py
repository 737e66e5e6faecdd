#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The functions a public header declares, as a linker version script.

    api_symbols.py HEADER VERSION OUT    write "VERSION { global: f; ...; local: *; };"
    api_symbols.py HEADER --list         print one function name a line

A function is a name followed by "(" outside comments, except a
"static inline" definition (nothing to export) and the macros the header
defines.  The header stays the one list of droce's API: libdroce.so.0
exports exactly what it declares (test/unit/shlib checks the built library).
"""
import re
import sys


def api_functions(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    inline = set(re.findall(r"static\s+inline\s[^({;]*?\b(\w+)\s*\(", text))
    macros = set(re.findall(r"#\s*define\s+(\w+)", text))
    names = set(re.findall(r"\b(droce_\w+)\s*\(", text))
    return sorted(names - inline - macros)


def main(argv):
    if len(argv) == 3 and argv[2] == "--list":
        print("\n".join(api_functions(argv[1])))
        return 0
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    names = api_functions(argv[1])
    with open(argv[3], "w") as out:
        out.write("%s {\n\tglobal:\n" % argv[2])
        for name in names:
            out.write("\t\t%s;\n" % name)
        out.write("\tlocal: *;\n};\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
