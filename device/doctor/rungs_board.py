"""The rungs that ask the board before a runner runs there: reach, identity, runtime (rows of ladder.py's table;
deployed is deployment.py's)."""
from __future__ import annotations

from core.model.device_words import machine_words
from device.deploy import board_packages
from device.deploy.native_deploy import board_runner, check_backend
from device.doctor.board_probe import candidates, present, probe_board
from device.doctor.checkup import Checkup, Verdict, expected_here
from device.doctor.deployment import backend_of, bundle_soc, deploy_mode, deployment, model_doc
from device.link.connect import open_transport
from device.link.runner_choice import NATIVE, PYTHON
from device.spec.neuron_paths import LIB_FIX, version_warning
from device.spec.soc import SOCS

_PY = ".".join(map(str, board_packages.MIN_PYTHON))
# Android images ship no Python: the public MT8371 Android ports (superLin006/MTK_model_zoo) push native binaries, and
# deploy the native runner's bionic build (docs/board.md, section 10).
ANDROID_FIX = ("Android has no Python the runner can use: deploy the native runner (`whisperkv deploy --device URL "
               "--backend dla --model BUNDLE`), or pass ?runner=native")
PYTHON_FIX = (f"the Python runner needs Python {_PY} or newer on the board (Genio IoT Yocto and Ubuntu images ship "
              "python3): install it, or name it with ?python=/usr/bin/python3; `whisperkv deploy` then brings what the "
              "backend needs. A board without one gets the native runner from `whisperkv deploy --model BUNDLE`")
# What no public record confirms for a Genio 520 warns, naming the fact and its source; the loads rung decides.
APUSYS_UNCONFIRMED = ("no /dev/apusys* on the board: the APU driver's node is expected there (docs/board.md), but "
                      "the one recorded Genio 520 EVK image (bbudaedu/talkybuddy edge/) does not list it; the loads "
                      "rung decides")
VERSION_UNCONFIRMED = ("unconfirmed: the public Whisper runner on this family (hhlqwq/mtk_models whisper_tiny) "
                       "compiles with ncc-tflite 8.2.31 for a Genio 720 image whose runtime is 8.2.16, one major "
                       "version, and no public record says what two majors apart do; the loads rung decides")


def reach(c: Checkup) -> Verdict:
    """The link opens and a shell answers. An unknown host key is the transport's own error, with its fix."""
    t = c.target
    opener = c.open_transport or (lambda: open_transport(t.url, trust_host_key=t.trust_host_key,
                                                         password=t.password))
    c.transport = opener()
    res = c.transport.run(["true"], timeout=60)
    v = Verdict(figures={"link": c.transport.label, "upload": getattr(c.transport, "upload_method", "")},
                decided_by=f"{c.transport.label}: a shell answers")
    if res.rc != 0:
        return v.fail(f"`true` failed on {c.transport.label} (exit {res.rc})", "check the board's shell")
    return v


def identity(c: Checkup) -> Verdict:
    """The board as its shell names it (on Android: its release, platform and ABI), then its Python, and the runner
    the link starts there: where that is the Python runner, a board without its Python is named and stops here with
    what it needs (on Android, and wherever it has no Python, the native runner deploy gives it)."""
    c.board = b = probe_board(c.transport, c.target.neuron_lib)
    soc = b.get("soc") or {}
    runner, runner_why = board_runner(b.get("python_at"), b.get("python_version"), b.get("android"))
    record = deployment(c).record       # the runner the link starts: ?runner=, else deploy's, else python
    b["runner"] = starts = c.target.runner or (record.runner if record else PYTHON)
    v = Verdict(figures={"soc": soc.get("name"), "npu": soc.get("npu"), "soc_read_from": soc.get("read_from"),
                         "os": b.get("os_name") or b.get("os"), "kernel": b.get("kernel"), "arch": b.get("arch"),
                         "cores": b.get("cores"), "mem_total_mb": b.get("mem_total_mb"),
                         "thermal_zones": b.get("thermal_zones"), "runner_kind": b.get("runner_kind"),
                         "python": b.get("python"), "python_at": b.get("python_at"), "abi": b.get("abi"),
                         "cpu_abi": b.get("cpu_abi"), "board_runner": runner, "board_runner_why": runner_why,
                         "runner": starts, "board_platform": b.get("board_platform"),
                         "named": machine_words({"device": c.transport.label, "soc": soc, "runner_kind":
                                                 b.get("runner_kind"), "machine": {"arch": b.get("arch"), "cores":
                                                 sum(g.get("count", 0) for g in b.get("cores") or ())}})})
    named = _named(b)
    if starts == PYTHON and not b.get("python"):
        if b.get("android"):
            return v.fail(f"{c.transport.label} runs {b['os_name']} ({named}), which has no Python for the Python "
                          "runner", ANDROID_FIX)
        said = f": {b['python_error']}" if b.get("python_error") else ""
        return v.fail(f"no Python at {c.transport.python!r} on {c.transport.label} ({named}){said}", PYTHON_FIX)
    built_for = bundle_soc(model_doc(c))      # --model's, else the board's
    v.figures["bundle_soc"] = built_for
    if soc.get("npu") in (None, "unknown"):
        why = "" if c.kind == "board" else f". {expected_here(c.kind)}"
        v.warn(f"the board names no SoC the table knows ({soc.get('name')}), so its NPU is unconfirmed: the loads "
               f"rung decides; if it has one, add its SoC to device/spec/soc.py{why}")
    if built_for and v.status != "fail" and soc.get("name") in SOCS:
        want, have = SOCS.get(built_for.upper(), {}).get("npu", "unknown"), soc["npu"]
        v.figures["bundle_npu"] = want
        if want != have:
            return v.fail(f"the bundle was compiled for {built_for.upper()} ({want}); the board is "
                          f"{soc['name']} ({have})", f"compile it for this board: `whisperkv compile "
                          f"{_bundle_dir(c)} --soc {soc['name'].lower()}`, then deploy it again")
    os_named = str(v.figures["os"] or "")      # "Android 14 on MT8189" names the SoC already
    said = [v.figures["named"] if str(soc.get("name")) not in os_named else None, os_named,
            b.get("abi") if starts == NATIVE else None]
    v.decided_by = ", ".join(filter(None, said)) + (f"; {runner_why}" if starts == NATIVE == runner else "")
    return v


def _named(b: dict) -> str:
    """The board in a few words for a failure line: its SoC (and the property that named it on Android), else
    Android's platform, its OS, its CPU architecture."""
    soc, what = b.get("soc") or {}, None
    if soc.get("name") not in (None, "unknown"):
        where = str(soc.get("read_from") or "")
        what = f"{soc['name']} ({where})" if where.startswith("getprop") else soc["name"]
    elif b.get("board_platform"):
        what = f"{b['board_platform']} (getprop ro.board.platform)"
    return ", ".join(x for x in (what, b.get("os_name") or b.get("os"), b.get("arch")) if x) or \
        "a board that names nothing"


def _bundle_dir(c: Checkup) -> str:
    """The bundle folder to name in a fix: --model's, else where deploy took it from on this PC."""
    record = deployment(c).record
    return str(c.bundle or (record.model_source if record else None) or "DIR")


def runtime(c: Checkup) -> Verdict:
    b, backend = c.board, backend_of(c)
    if b.get("runner") == NATIVE:
        return native_runtime(c, backend)
    mode = deploy_mode(backend)
    t = c.transport
    # deploy's own probe: what the board's Python finds, with what an earlier deploy installed on the runner's path
    board = board_packages.probe(t, t.resolve(t.runner_dir or "~/whisperkv").rstrip("/"))
    v = Verdict(figures={"python": board.version, "backend": backend, "modules": board.modules})
    old = board_packages.too_old(board)
    if old:
        return v.fail(*old)
    lost = board_packages.missing(board, mode)
    if lost:
        names = ", ".join(" or ".join(alts) for alts in lost)
        return v.fail(f"the board's Python {board.version} lacks {names}, which backend {backend} needs",
                      f"`whisperkv deploy --device URL --backend {mode}` installs them (offline: --wheels DIR)")
    if backend != "dla":
        v.decided_by = f"Python {board.version}, {', '.join(m for m, ok in board.modules.items() if ok)}"
        return v
    lib = b.get("neuron_runtime")
    v.figures["apusys"] = b.get("apusys")
    if not lib:
        return v.fail("no Neuron runtime library on the board (looked at " + ", ".join(b.get("looked_at") or [])
                      + ")", LIB_FIX)
    v.figures |= {"library": lib["path"], "library_version": lib.get("version"), "api": lib.get("api"),
                  "apis": lib.get("apis"), "library_kind": lib.get("kind")}
    if lib.get("error"):
        return v.fail(f"{lib['path']} does not load ({lib['error']})", LIB_FIX)
    if not lib.get("apis"):
        return v.fail(f"{lib['path']} is not a Neuron runtime library: it exports neither Runtime V1 "
                      "(RuntimeAPI.h) nor V2 (RuntimeV2.h) whole", LIB_FIX)
    if not b.get("apusys"):
        v.warn(APUSYS_UNCONFIRMED)
    compiler = str((model_doc(c).get("dla") or {}).get("version") or "")
    v.figures["dla_compiler"] = compiler or None
    mismatch = version_warning(compiler, lib.get("version"))
    if mismatch:
        v.warn(f"{mismatch}; {VERSION_UNCONFIRMED}" + (" (a STAND-IN runtime)" if lib.get("kind") == "stand-in"
                                                       else ""))
    v.decided_by = f"{lib['path']} ({lib.get('api')} of {'/'.join(lib['apis'])}, {lib.get('version') or 'no version'})"
    return v


def native_runtime(c: Checkup, backend: str) -> Verdict:
    """The native runner needs no Python: the backend it serves (dla), the Neuron library's file among the search
    order's, /dev/apusys*. It opens the library itself: its version and API are hello's, at the loads rung."""
    check_backend(backend)
    found, b = present(c.transport, c.target.neuron_lib), c.board
    v = Verdict(figures={"runner": NATIVE, "backend": "dla", "library": found[0] if found else None,
                         "apusys": b.get("apusys")})
    if not found:
        looked = candidates(c.target.neuron_lib)
        where = looked[0] if len(looked) == 1 else f"any of the search order's {len(looked)} paths (neuron_paths.py)"
        v.warn(f"no Neuron runtime library at {where}: the native runner asks the loader for its soname last; the "
               "loads rung decides")
    if not b.get("apusys"):
        v.warn(APUSYS_UNCONFIRMED)
    v.decided_by = (f"{found[0]}, for the native runner to open" if found else "no library file found") + \
        " (its version and API: the runner's hello)"
    return v
