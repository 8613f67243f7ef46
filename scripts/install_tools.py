"""meson install: pip-install the report tools (reports/) into the install prefix
(under DESTDIR when given), without fetching anything: their dependencies (numpy,
pandas, matplotlib) are the environment's, as a module system provides them."""

import os
import shutil
import subprocess
import sys
import tempfile

src = sys.argv[1]
prefix = os.environ["MESON_INSTALL_PREFIX"]
destdir = os.environ.get("DESTDIR", "")
cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
       "--no-index", "--disable-pip-version-check", "--no-warn-script-location",
       "--ignore-installed", "--quiet", "--prefix", prefix]
if destdir:
    cmd += ["--root", destdir]
# Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "reports")
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                            "__pycache__"))
    rc = subprocess.run(cmd + [copy]).returncode
if rc != 0:
    print("iochar: pip could not install the report tools; `pip install reports/` "
          "installs them (meson -Dtools=false skips this step)", file=sys.stderr)
sys.exit(rc)
