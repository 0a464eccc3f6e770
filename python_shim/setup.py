# SPDX-License-Identifier: MIT
"""pip install ./python_shim: builds the C extension and, with the project's
own Makefile, libcuptrace.so and the cuptrace program, which the package
carries (cuptrace/lib, cuptrace/bin).

pip installs no system packages: the build needs make, a C and C++
compiler, the headers of Python, zstd, zlib and SQLite, and the CUDA
toolkit's NVTX and CUPTI headers (CUDA_HOME, default /usr/local/cuda);
check_prerequisites() names what is missing before make runs. On Debian:
apt install build-essential python3-dev libzstd-dev zlib1g-dev
libsqlite3-dev (tests/install-deps.sh installs these and what the tests
use).

The C++ modules for torch (cuptrace._torchops, the torch source's operator
observer, and cuptrace._torchhooks, the backward ranges' node hooks) are
built here only where this Python imports a torch with its C++ headers
(pip's torch has them; Debian's needs libtorch-dev), which pip's build
isolation hides: `pip install --no-build-isolation ./python_shim` (that
route also needs the `wheel` package where setuptools is older than 70.1:
python3-wheel). Otherwise the package builds them when torch is first
imported in a traced process, into a cache (cuptrace/_torchbuild.py)."""
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def project_version():
    """The version the Makefile's CT_VERSION line gives the library and the tool."""
    with open(os.path.join(ROOT, "Makefile")) as f:
        for line in f:
            if line.startswith("CT_VERSION :="):
                return line.split(":=", 1)[1].strip()
    raise RuntimeError("no CT_VERSION line in the Makefile")


VERSION = project_version()


# What the Makefile's build includes, and the Debian package that has it.
HEADERS = [("zstd.h", "libzstd-dev"), ("zlib.h", "zlib1g-dev"), ("sqlite3.h", "libsqlite3-dev"),
           ("nvtx3/nvToolsExt.h", "the CUDA toolkit (CUDA_HOME)"),
           ("cupti.h", "the CUDA toolkit (CUDA_HOME)")]


def check_prerequisites():
    """SystemExit naming every missing tool and header, before make runs."""
    missing = [f"`{t}`" for t in ("make", os.environ.get("CC", "cc")) if not shutil.which(t)]
    cuda = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc):
        with tempfile.TemporaryDirectory() as d:
            for header, pkg in HEADERS:
                src = os.path.join(d, "t.c")
                with open(src, "w") as f:
                    f.write(f"#include <{header}>\n")
                p = subprocess.run([cc, "-E", "-isystem", cuda, src, "-o", os.devnull],
                                   capture_output=True)
                if p.returncode != 0:
                    missing.append(f"{header} ({pkg})")
    if missing:
        raise SystemExit(
            "cuptrace: cannot build: missing " + ", ".join(missing) + ". pip installs no "
            "system packages; on Debian or Ubuntu: apt install build-essential python3-dev "
            "libzstd-dev zlib1g-dev libsqlite3-dev, and the CUDA toolkit's headers under "
            f"CUDA_HOME (now {os.path.dirname(cuda)}); tests/install-deps.sh in the checkout "
            "installs all of these")


class build_with_make(build_py):
    """Runs the project's Makefile, copies the library and the program into
    the package, puts cuptrace-auto.pth beside it, the header the torch
    modules are built with inside it, and the torch modules themselves
    where this Python's torch has its headers."""

    def run(self):
        super().run()
        if not os.path.exists(os.path.join(ROOT, "Makefile")):
            raise SystemExit("cuptrace: build from a checkout of the project "
                             "(python_shim/ inside it): its Makefile builds the library")
        check_prerequisites()
        out = os.path.join(os.path.abspath(self.build_lib), "cuptrace")
        lib = os.path.join(out, "lib", "libcuptrace.so")
        prog = os.path.join(out, "bin", "cuptrace")
        jobs = os.environ.get("CUPTRACE_MAKE_JOBS", "2")
        # Release objects are shared with the checkout's build/; the two
        # outputs go straight into the package. SAN/DEBUG from the caller's
        # environment do not leak in.
        subprocess.check_call(["make", "-C", ROOT, f"-j{jobs}", "SAN=", "DEBUG=",
                               f"LIB={lib}", f"TOOL={prog}", lib, prog])
        shutil.copy(os.path.join(HERE, "cuptrace-auto.pth"), self.build_lib)
        inc = os.path.join(out, "include", "cuptrace")
        os.makedirs(inc, exist_ok=True)
        shutil.copy(os.path.join(ROOT, "include", "cuptrace", "torch_abi.h"), inc)
        # Against this Python's torch, or none (a module an earlier build
        # left in the shared build directory would be for another torch:
        # removed first). Optional: the package builds them at first use.
        rc = subprocess.call([sys.executable, os.path.join(out, "_torchbuild.py"), "--prebuild",
                              out])
        if rc == 2:
            print("cuptrace: warning: the torch modules did not build against this torch; "
                  "the package builds them when torch is first imported")


ext = Extension(
    "cuptrace._cuptrace",
    sources=["cuptrace/_cuptrace.c", "cuptrace/_torch.c", "../libtrace/config/config.c", "../libtrace/config/pattern.c"],
    include_dirs=[os.path.join(ROOT, "libtrace", "config"), os.path.join(ROOT, "include")],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-Wno-missing-field-initializers"],
    libraries=["dl", "m"],
)


def wheel_command_check():
    """pip --no-build-isolation builds with this environment's setuptools,
    whose bdist_wheel command (before 70.1) is the `wheel` package's: said
    plainly instead of setuptools' "invalid command 'bdist_wheel'"."""
    def have(name):
        try:
            return importlib.util.find_spec(name) is not None
        except ImportError:
            return False
    if "bdist_wheel" not in sys.argv or have("wheel") or have("setuptools.command.bdist_wheel"):
        return
    raise SystemExit("cuptrace: building a wheel needs the `wheel` package in this environment "
                     "(pip install --no-build-isolation uses its setuptools, older than 70.1): "
                     "pip install wheel, or apt install python3-wheel")


wheel_command_check()
setup(
    name="cuptrace",
    version=VERSION,
    description="Lightweight GPU tracer: annotations, capture control and PyTorch helpers",
    packages=["cuptrace"],
    ext_modules=[ext],
    # The torch modules' sources: built at first use for the torch in use
    # (cuptrace/_torchbuild.py), where the package has none for it.
    package_data={"cuptrace": ["_torchops*.cpp", "_torchops*.c", "_torchops.h", "_torchhooks.cpp",
                               "_torchhooks.h"]},
    cmdclass={"build_py": build_with_make},
    entry_points={"console_scripts": ["cuptrace = cuptrace.__main__:main"]},
    # The C code uses 3.10's API (Py_NewRef) and 3.9's (the vectorcall
    # calls); tests/integration/python/test_python_install.py checks that
    # this is the newest of what it uses.
    python_requires=">=3.10",
    zip_safe=False,
)
