# SPDX-License-Identifier: MIT
"""tests/README.md is the map of the suite: every file under tests/unit,
tests/integration and tests/fuzz (the fuzz corpus aside) is named there,
each test by its path relative to tests/, and every file it names exists,
so that a reader looking for a feature's tests finds all of them."""
import re

from conftest import ROOT

TESTS = ROOT / "tests"
MAPPED = ("unit", "integration", "fuzz")


def suite_files():
    """Paths relative to tests/ of the files the map must name."""
    out = []
    for top in MAPPED:
        for p in sorted((TESTS / top).rglob("*")):
            rel = p.relative_to(TESTS)
            if not p.is_file() or rel.parts[:2] == ("fuzz", "corpus") or \
                    any(part.startswith((".", "__pycache__")) for part in rel.parts):
                continue
            out.append(rel.as_posix())
    return out


def named(readme, rel):
    """Whether README names rel: a test by its whole path (the features
    table); a helper (conftest.py, check.h, replay.c, ...) that way too, or
    by its bare name in the row of its folder in the layout table."""
    if re.search(rf"(?<![\w/.-]){re.escape(rel)}(?![\w/.-])", readme):
        return True
    folder, name = rel.rsplit("/", 1)
    if re.fullmatch(r"(test_|tool_test_|fuzz_)\w+\.(py|c)", name):
        return False
    rows = [l for l in readme.splitlines() if l.startswith(f"| `{folder}/` |")]
    return any(re.search(rf"`{re.escape(name)}`", row) for row in rows)


def test_every_test_file_is_in_the_map():
    readme = (TESTS / "README.md").read_text(encoding="utf-8")
    files = suite_files()
    assert "integration/tools/test_suite_map.py" in files and len(files) > 50, files
    missing = [f for f in files if not named(readme, f)]
    assert not missing, f"tests/README.md does not name {missing}: add each to its table"


def test_every_test_file_the_map_names_exists():
    readme = (TESTS / "README.md").read_text(encoding="utf-8")
    named_paths = set(re.findall(r"`((?:unit|integration|fuzz|gpu)/[\w/.-]+\.\w+)`", readme))
    assert len(named_paths) > 30, named_paths
    gone = sorted(p for p in named_paths if not (TESTS / p).is_file())
    assert not gone, f"tests/README.md names files that do not exist: {gone}"
