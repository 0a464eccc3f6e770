# SPDX-License-Identifier: MIT
"""tests/layers/check_layers.py, the checker of docs/LAYOUT.md's rules: the
real tree passes it, and a scratch copy of the tree with one violation
planted (an include, a symbol taken across folders, a circle between two
files, a header a folder may never include, a file of the core that uses
one above it in the core's order) fails it with one line that names it."""
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, PYTHON, ROOT

CHECKER = ROOT / "tests" / "layers" / "check_layers.py"
C_EXT = (".c", ".h", ".cpp")


def objects():
    return BUILD / "obj" / (BUILD / ".variant").read_text().strip()


def check(root, obj):
    p = subprocess.run([PYTHON, CHECKER, "--root", root, "--obj", obj],
                       capture_output=True, text=True, timeout=60)
    assert not p.stderr, p.stderr
    return p.returncode, p.stdout.splitlines()


@pytest.fixture
def tree(tmp_path):
    """A copy of the sources, the Makefiles, the map and the objects (with
    their times, so that no object reads as older than its source)."""
    dst = tmp_path / "tree"
    for top in ("libtrace", "tools", "include", "python_shim"):
        shutil.copytree(ROOT / top, dst / top, ignore=lambda d, names: [
            n for n in names if not os.path.isdir(os.path.join(d, n)) and not n.endswith(C_EXT)
            and n != "python.mk"])
    for f in ("Makefile", "docs/LAYOUT.md"):
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst / f)
    obj = tmp_path / "obj"
    shutil.copytree(objects(), obj, ignore=lambda d, names: [
        n for n in names if not os.path.isdir(os.path.join(d, n)) and not n.endswith(".o")])
    return dst, obj


def plant_line(root, path, line):
    """Adds line at the end of path; returns its line number. The file
    keeps its time: the object stays as new as its source."""
    f = root / path
    st = f.stat()
    text = f.read_text()
    f.write_text(text + line + "\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    return text.count("\n") + 1


def plant_object(root, obj, path, text):
    """A new C file and its object, built as the tools' objects are."""
    (root / path).write_text(text)
    o = obj / (path[:-2] + ".o")
    o.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-std=gnu11", "-c", root / path, "-o", o], check=True)


def test_real_tree_passes():
    rc, out = check(ROOT, objects())
    assert rc == 0, "\n".join(out)
    assert len(out) == 1 and out[0].startswith("check-layers: ") and "no circle" in out[0]


def test_copy_passes(tree):
    # the scratch copy alone is clean: every failure below is the plant's
    rc, out = check(*tree)
    assert rc == 0, "\n".join(out)


def test_tools_including_the_library_core_fails(tree):
    root, obj = tree
    n = plant_line(root, "tools/write/out.c", '#include "../../libtrace/ring.h"')
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == [f'tools/write/out.c:{n}: includes "../../libtrace/ring.h" '
                        f'(libtrace/ring.h): tools/write may not use libtrace']
    assert out[-1] == "check-layers: 1 violation of docs/LAYOUT.md"


def test_util_including_the_model_fails(tree):
    root, obj = tree
    n = plant_line(root, "tools/util/hmap.c", '#include "model/model.h"')
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == [f'tools/util/hmap.c:{n}: includes "model/model.h" '
                        f'(tools/model/model.h): tools/util may not use tools/model']


def test_util_calling_the_model_fails(tree):
    root, obj = tree
    plant_object(root, obj, "tools/util/planted.c",
                 "int model_close(void *r);\nint planted(void *r) { return model_close(r); }\n")
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == ["tools/util/planted.c -> tools/model/model.c (model_close): "
                        "tools/util may not use tools/model"]


def test_circle_between_two_files_fails(tree):
    root, obj = tree
    plant_object(root, obj, "tools/util/ping.c",
                 "int pong(int n);\nint ping(int n) { return n ? pong(n - 1) : 0; }\n")
    plant_object(root, obj, "tools/util/pong.c",
                 "int ping(int n);\nint pong(int n) { return n ? ping(n - 1) : 1; }\n")
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == ["circle: tools/util/ping.c -> tools/util/pong.c (pong) "
                        "-> tools/util/ping.c (ping)"]


def test_tools_including_cupti_fails(tree):
    root, obj = tree
    n = plant_line(root, "tools/read/live.c", "#include <cupti.h>")
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == [f"tools/read/live.c:{n}: includes <cupti.h>, a system header that "
                        f"tools/read may never include (<cupti*.h>)"]


def test_core_file_using_one_above_it_fails(tree):
    # thread.c is below capture.c in the core's order: capture calls it
    root, obj = tree
    n = plant_line(root, "libtrace/thread.c", '#include "capture.h"')
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == [f'libtrace/thread.c:{n}: includes "capture.h" (libtrace/capture.h): '
                        f'the order of libtrace puts capture.c above thread.c']


def test_library_including_the_tools_fails(tree):
    root, obj = tree
    n = plant_line(root, "libtrace/format/dec.c", '#include "../../tools/util/hmap.h"')
    rc, out = check(root, obj)
    assert rc == 1
    assert out[:-1] == [f'libtrace/format/dec.c:{n}: includes "../../tools/util/hmap.h" '
                        f'(tools/util/hmap.h): libtrace/format may not use tools/util']
