"""pip install ./python_shim: builds the C extension and, with the project's
own Makefile, libcuptrace.so and the cuptrace program, which the package
carries (cuptrace/lib, cuptrace/bin). Needs only what tests/install-deps.sh
installs (build-essential, python3-dev, libzstd-dev, zlib1g-dev,
libsqlite3-dev, the CUDA headers for NVTX)."""
import os
import shutil
import subprocess
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VERSION = "0.1.0"


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


ext = Extension(
    "cuptrace._cuptrace",
    sources=["cuptrace/_cuptrace.c", "cuptrace/_torch.c", "../libtrace/common/config.c", "../libtrace/common/pattern.c"],
    include_dirs=[os.path.join(ROOT, "libtrace")],
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-Wno-missing-field-initializers"],
    libraries=["dl", "m"],
)

setup(
    name="cuptrace",
    version=VERSION,
    description="Lightweight GPU tracer: annotations, capture control and PyTorch helpers",
    packages=["cuptrace"],
    ext_modules=[ext],
    cmdclass={"build_py": build_with_make},
    entry_points={"console_scripts": ["cuptrace = cuptrace.__main__:main"]},
    python_requires=">=3.8",
    zip_safe=False,
)
