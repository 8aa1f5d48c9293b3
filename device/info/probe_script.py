"""One script for a board's own Python (`python3 -c`), made of stdlib-only modules of the runner and a body that
uses them: the modules' texts are joined, their `__future__` and package imports dropped (the script's names
are all in one namespace), and one `__future__` import heads it."""
from __future__ import annotations

from pathlib import Path


def probe_script(modules, body: str) -> str:
    kept = [ln for m in modules for ln in Path(m.__file__).read_text().splitlines()
            if not ln.startswith(("from __future__", "from device."))]
    return "from __future__ import annotations\n" + "\n".join(kept) + "\n" + body
