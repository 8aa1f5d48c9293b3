"""The packages `whisperkv deploy` installed beside the runner (device/deploy/board_packages.py), put on its path.

Deploy installs what the board lacks into DIR/venv (a venv made with --system-site-packages) or, where no venv can
be made, into DIR/site/pythonX.Y with pip --target. The runner, started from DIR by any transport, puts the folder
for its own Python version first on sys.path before importing anything else, as that venv's interpreter would:
the board's own Python then runs with them, and no device URL has to name another interpreter.
Stdlib only: deploy sends this file ahead of its probe of the board.
"""
import os
import site
import sys


def deployed_dirs(root):
    """The folders under `root` holding packages deploy installed for this Python version."""
    version = "python%d.%d" % sys.version_info[:2]
    dirs = (os.path.join(root, "venv", "lib", version, "site-packages"), os.path.join(root, "site", version))
    return [d for d in dirs if os.path.isdir(d)]


def use_deployed_packages(root):
    """Put deployed_dirs(root) first on sys.path (their .pth files processed); returns them."""
    dirs = deployed_dirs(root)
    for d in reversed(dirs):
        site.addsitedir(d)
        sys.path.remove(d)
        sys.path.insert(0, d)
    return dirs
