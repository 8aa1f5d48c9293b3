"""What the link knows of an Android board: how it is recognised (getprop answers `ro.build.version.release` only
there), the folder the runner goes to, and the library path the native runner starts with.

Android ships no Python, so such a board gets the native runner built for bionic (device/deploy/native_deploy.py).
adb's shell user may write and run programs in /data/local/tmp (its HOME is /, not writable), where the public
MT8371 Android ports (superLin006/MTK_model_zoo) push their binaries too. Those ports `dlopen` the Neuron runtime by
its absolute /vendor/lib64/mt8189 path from /data/local/tmp because Android's linker namespaces may refuse a vendor
library found any other way; the runner is started with LD_LIBRARY_PATH set to the vendor folders of the Neuron
search order (device/spec/neuron_paths.py), so that the library's own vendor dependencies resolve as well. Whether a
namespace lets a program in /data/local/tmp open them at all only a real board can show (docs/board.md).
"""
from __future__ import annotations

import re

from device.spec.neuron_paths import SEARCH_ORDER

RELEASE = "ro.build.version.release"
PLATFORM = "ro.board.platform"
CPU_ABI = "ro.product.cpu.abi"
# The one command that tells Android: nothing (exit 1) where there is no getprop.
PROBE = ["sh", "-c", f"command -v getprop >/dev/null 2>&1 && getprop {RELEASE}"]
RUNNER_DIR = "/data/local/tmp/whisperkv"
LINUX_DIR = "~/whisperkv"
# "/vendor/lib64/mt8189:/vendor/lib64": the folders of the search order's Android paths, in its order
LIBRARY_PATH = ":".join(dict.fromkeys(p.rsplit("/", 1)[0] for p in SEARCH_ORDER if p.startswith("/vendor/")))


def release(text: str) -> str | None:
    """getprop's answer read: a release ("14", "8.1.0"), None for none (or for anything that is not one)."""
    text = text.strip()
    return text if re.fullmatch(r"[\w.-]{1,32}", text) else None


def os_name(release: str | None, platform: str | None = None) -> str | None:
    """"Android 14", or with its board platform "Android 14 on MT8189"; None off Android."""
    if not release:
        return None
    return f"Android {release}" + (f" on {platform.upper()}" if platform else "")


def is_android(os: str | None) -> bool:
    """An OS name that os_name (or a runner's hello, `os`) gave for Android."""
    return str(os or "").startswith("Android")


def runner_env(android: bool) -> list[str]:
    """What goes before the native runner's command line: on Android, `env LD_LIBRARY_PATH=…` (toybox's env)."""
    return ["env", f"LD_LIBRARY_PATH={LIBRARY_PATH}"] if android else []
