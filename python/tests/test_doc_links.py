"""Every relative link and image in README.md, DEVELOPERS.md and docs/ (docs/history/ included) points to a file or
folder that exists, so a renamed chart or a moved document cannot leave a dangling reference."""

import glob
import os
import re
import subprocess

import pytest
from conftest import PYTHON_DIR

ROOT = os.path.dirname(PYTHON_DIR)
DOCS = sorted([os.path.join(ROOT, "README.md"), os.path.join(ROOT, "DEVELOPERS.md")]
              + glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
# [text](target) and ![alt](target), target up to a space or ')'; <img src="..."> too.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMG = re.compile(r"<img[^>]*\ssrc=\"([^\"]+)\"")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def targets(path):
    text = FENCE.sub("", open(path, encoding="utf-8").read())  # commands in code blocks are not links
    text = re.sub(r"`[^`\n]*`", "", text)                        # nor inline code
    for m in list(LINK.finditer(text)) + list(IMG.finditer(text)):
        t = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", t) or t.startswith("#"):
            continue  # http:, https:, mailto:, in-page anchors
        yield t.split("#", 1)[0]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_relative_link_resolves(doc):
    missing = [t for t in targets(doc) if not os.path.exists(os.path.join(os.path.dirname(doc), t))]
    assert not missing, f"{os.path.relpath(doc, ROOT)} links to missing files: {missing}"


def test_the_scan_sees_links():
    found = list(targets(os.path.join(ROOT, "docs", "PERFORMANCE.md")))
    assert "img/h200_roofline.svg" in found and "history/README.md" in found


@pytest.mark.parametrize("image", sorted(glob.glob(os.path.join(ROOT, "docs", "img", "*"))
                                         + glob.glob(os.path.join(ROOT, "docs", "history", "img", "*"))),
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_every_image_is_shown_by_some_document(image):
    shown = {os.path.normpath(os.path.join(os.path.dirname(d), t)) for d in DOCS for t in targets(d)}
    assert os.path.normpath(image) in shown, \
        f"{os.path.relpath(image, ROOT)} is shown by no document (move it with the history, or delete it)"


def test_developers_layout_lists_every_folder():
    text = open(os.path.join(ROOT, "DEVELOPERS.md"), encoding="utf-8").read()
    src = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
    # the top-level folders git tracks (a build/ or runs/ folder here is not part of the layout)
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    top = sorted({f.split("/", 1)[0] for f in tracked.stdout.splitlines() if "/" in f and not f.startswith(".")})
    missing = [d for d in src + top if f"| `{d}/` |" not in text]
    assert not missing, f"DEVELOPERS.md's layout tables miss: {missing}"


def _tracked_folders(under, depth=1):
    """The folders `depth` levels below `under` (relative to the root) that hold a tracked file."""
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files", under or "."], capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    n = len([p for p in under.split("/") if p]) + depth
    return sorted({"/".join(f.split("/")[:n]) for f in files if len(f.split("/")) > n})


def test_the_developers_guide_names_every_folder():
    """DEVELOPERS.md's layout tables name every top-level folder, every folder of src/ and the folders inside python/,
    scripts/, tests/, tests/data/ and docs/: a new folder comes with its line."""
    text = open(os.path.join(ROOT, "DEVELOPERS.md"), encoding="utf-8").read()
    folders = _tracked_folders("")
    for under in ("src", "python", "scripts", "tests", "tests/data", "docs"):
        folders += _tracked_folders(under)
    missing = [f for f in folders if f"`{f}/`" not in text and f"`{f.split('/', 1)[-1]}/`" not in text]
    assert not missing, f"DEVELOPERS.md does not name: {missing}"
