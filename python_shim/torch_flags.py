# SPDX-License-Identifier: MIT
"""How to build cuptrace._torchhooks (the C++ backward hooks) against the
torch this interpreter imports: prints the compiler and linker flags on one
line (python.mk), or exits 1 when torch or its C++ headers are missing (the
package then hooks tensors from C only). setup.py imports flags().
`torch_flags.py --write-version DIR` also writes DIR/_torchhooks.version
(one import of torch for both)."""
import os
import sys


def flags():
    """{'include_dirs', 'library_dirs', 'libraries', 'macros', 'abi'} or None."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - any failure to import: no torch to build for
        return None
    root = os.path.dirname(os.path.abspath(torch.__file__))
    inc = os.path.join(root, "include")
    if not os.path.exists(os.path.join(inc, "torch", "csrc", "autograd", "function_hook.h")):
        return None
    lib = os.path.join(root, "lib")
    return {
        "include_dirs": [inc, os.path.join(inc, "torch", "csrc", "api", "include")],
        "library_dirs": [lib],
        "libraries": ["torch_python", "torch", "torch_cpu", "c10"],
        "macros": [("CT_TORCH_VERSION", '"%s"' % torch.__version__),
                   ("_GLIBCXX_USE_CXX11_ABI", "1" if torch.compiled_with_cxx11_abi() else "0")],
    }


VERSION_FILE = "_torchhooks.version"


def write_version(pkg_dir):
    """Beside the module, the torch version it is built for: torch.py reads
    it before loading the module, whose libraries are that torch's (loading
    it under another torch could crash in their initialisers)."""
    import torch
    with open(os.path.join(pkg_dir, VERSION_FILE), "w") as f:
        f.write(torch.__version__ + "\n")


def main():
    f = flags()
    if f is None:
        return 1
    if sys.argv[1:2] == ["--write-version"]:
        write_version(sys.argv[2])
    out = ["-isystem" + d for d in f["include_dirs"]]
    out += ["-D%s=%s" % (k, v) for k, v in f["macros"]]  # $(...) keeps the quotes as characters
    out += ["-L" + d for d in f["library_dirs"]] + ["-Wl,-rpath," + d for d in f["library_dirs"]]
    out += ["-l" + lib for lib in f["libraries"]]
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
