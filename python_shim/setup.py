# SPDX-License-Identifier: MIT
"""pip install ./python_shim: builds the C extension and, with the project's
own Makefile, libcuptrace.so and the cuptrace program, which the package
carries (cuptrace/lib, cuptrace/bin). Needs only what tests/install-deps.sh
installs (build-essential, python3-dev, libzstd-dev, zlib1g-dev,
libsqlite3-dev, the CUDA headers for NVTX); with a torch that has its C++
headers in the same environment (libtorch-dev on Debian; pip's torch has
them; pip needs --no-build-isolation to see it) also cuptrace._torchhooks."""
import glob
import os
import shutil
import subprocess
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
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


class build_with_make(build_py):
    """Runs the project's Makefile, copies the library and the program into
    the package, and puts cuptrace-auto.pth beside it."""

    def run(self):
        super().run()
        if not os.path.exists(os.path.join(ROOT, "Makefile")):
            raise SystemExit("cuptrace: build from a checkout of the project "
                             "(python_shim/ inside it): its Makefile builds the library")
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


class build_ext_torch(build_ext):
    """_torchhooks is built every time (setuptools' build directory is named
    by the Python, not by the torch the module is built against: a build for
    another environment's torch would otherwise be taken as up to date), is
    optional (a compiler or a torch that cannot build it leaves the package
    without it), and gets its version file beside it."""

    def run(self):
        # What an earlier build for another torch (or with one) left in the
        # shared build directory must not go into this package.
        for f in glob.glob(os.path.join(self.build_lib, "cuptrace", "_torchhooks*")):
            os.remove(f)
        super().run()

    def build_extension(self, ext):
        if ext.name != "cuptrace._torchhooks":
            return super().build_extension(ext)
        force = self.force
        self.force = True
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001 - optional: the package works without it
            print("cuptrace: warning: cuptrace._torchhooks not built (%s); cuptrace.torch "
                  "hooks tensors instead" % e)
            return
        finally:
            self.force = force
        from torch_flags import write_version
        write_version(os.path.dirname(self.get_ext_fullpath(ext.name)))


ext = Extension(
    "cuptrace._cuptrace",
    sources=["cuptrace/_cuptrace.c", "cuptrace/_torch.c", "../libtrace/config/config.c", "../libtrace/config/pattern.c"],
    include_dirs=[os.path.join(ROOT, "libtrace", "config")],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-Wno-missing-field-initializers"],
    libraries=["dl", "m"],
)


def torchhooks():
    """cuptrace._torchhooks (C++ backward hooks), built against the torch
    this interpreter imports (torch_flags.py), or nothing where it has no
    torch with C++ headers: cuptrace.torch then hooks tensors from C."""
    import sys
    sys.path.insert(0, HERE)
    from torch_flags import flags
    f = flags()
    if f is None:
        return []
    return [Extension(
        "cuptrace._torchhooks",
        sources=["cuptrace/_torchhooks.cpp"],
        language="c++",
        define_macros=f["macros"],
        library_dirs=f["library_dirs"],
        runtime_library_dirs=f["library_dirs"],
        libraries=f["libraries"],
        # C++20: what torch 2.x's headers need (1.13's take it too).
        extra_compile_args=["-std=c++20", "-fvisibility=hidden"] +
        [a for d in f["include_dirs"] for a in ("-isystem", d)],
    )]


setup(
    name="cuptrace",
    version=VERSION,
    description="Lightweight GPU tracer: annotations, capture control and PyTorch helpers",
    packages=["cuptrace"],
    ext_modules=[ext] + torchhooks(),
    cmdclass={"build_py": build_with_make, "build_ext": build_ext_torch},
    entry_points={"console_scripts": ["cuptrace = cuptrace.__main__:main"]},
    # The C code uses 3.10's API (Py_NewRef) and 3.9's (the vectorcall
    # calls); tests/integration/python/test_python_install.py checks that
    # this is the newest of what it uses.
    python_requires=">=3.10",
    zip_safe=False,
)
