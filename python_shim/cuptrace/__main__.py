# SPDX-License-Identifier: MIT
"""`python -m cuptrace ...` and the `cuptrace` console script: the cuptrace
program carried by the package (bin/cuptrace, next to lib/libcuptrace.so,
where it finds the library for `cuptrace run`)."""
import os
import sys


def main():
    from . import program_path
    prog = program_path()
    if prog is None:
        sys.stderr.write("cuptrace: error: the cuptrace program is not in this package "
                         "(reinstall it: pip install ./python_shim)\n")
        return 2
    args = ["cuptrace", *sys.argv[1:]]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(prog, args)


if __name__ == "__main__":
    sys.exit(main())
