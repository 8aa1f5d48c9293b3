"""The rungs that ask the board before a runner runs there: reach, identity, runtime, deployed (ladder.py)."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from core.model.device_words import machine_words
from device import ROOT
from device.link import board_packages
from device.link.connect import open_transport
from device.link.deploy import board_arch, bundle, remote_hashes
from device.link.doctor.board_probe import probe_board
from device.link.doctor.ladder import Checkup, Verdict
from device.runner.backends import REGISTRY
from device.runner.neuron_runtime import LIB_FIX, version_warning
from device.runner.soc import SOCS

LINUX_FIX = ("the runner needs a Linux image (Genio IoT Yocto or Ubuntu): flash one, or run on a board that has "
             "one; on Android the Neuron runtime belongs to the vendor's apps, not to a Python runner")
PYTHON_FIX = "install python3 and numpy on the board, or name the interpreter with ?python=/usr/bin/python3"


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
    try:
        c.board = probe_board(c.transport, c.target.neuron_lib)
    except ValueError as exc:
        return Verdict().fail(f"no Python answers on {c.transport.label} ({exc})", PYTHON_FIX)
    b = c.board
    soc = b.get("soc") or {}
    v = Verdict(figures={"soc": soc.get("name"), "npu": soc.get("npu"), "soc_read_from": soc.get("read_from"),
                         "os": b.get("os"), "kernel": b.get("kernel"), "arch": b.get("arch"),
                         "cores": b.get("cores"), "mem_total_mb": b.get("mem_total_mb"),
                         "thermal_zones": b.get("thermal_zones"), "runner_kind": b.get("runner_kind"),
                         "named": machine_words({"device": c.transport.label, "soc": soc, "runner_kind":
                                                 b.get("runner_kind"), "machine": {"arch": b.get("arch"), "cores":
                                                 sum(g.get("count", 0) for g in b.get("cores") or ())}})})
    if b.get("android"):
        v.figures["os"] = f"Android {b['android']}"
        return v.fail(f"{c.transport.label} runs Android {b['android']}", LINUX_FIX)
    built_for = bundle_soc(c.bundle)
    v.figures["bundle_soc"] = built_for
    if soc.get("npu") in (None, "unknown"):
        c.board_only(v, f"the board names no SoC the table knows ({soc.get('name')})",
                     "check /proc/device-tree/compatible on the board; add its SoC to device/runner/soc.py")
    if built_for and v.status != "fail" and soc.get("name") in SOCS:
        want, have = SOCS.get(built_for.upper(), {}).get("npu", "unknown"), soc["npu"]
        v.figures["bundle_npu"] = want
        if want != have:
            return v.fail(f"the bundle was compiled for {built_for.upper()} ({want}); the board is "
                          f"{soc['name']} ({have})", f"compile it for this board: `whisperkv compile "
                          f"{c.bundle} --soc {soc['name'].lower()}`, then deploy it again")
    v.decided_by = f"{v.figures['named']}, {v.figures['os']}"
    return v


def bundle_soc(bundle: Path | None) -> str | None:
    """The SoC a compiled bundle's .dla graphs were built for (model.json's dla.soc), None for none."""
    doc = bundle_doc(bundle)
    return (doc.get("dla") or {}).get("soc") or None


def bundle_doc(bundle: Path | None) -> dict:
    try:
        return json.loads((Path(bundle) / "model.json").read_text()) if bundle else {}
    except (OSError, ValueError):
        return {}


def backend_of(c: Checkup) -> str:
    """The backend the doctor checks: the target's, else dla for a compiled bundle, else auto."""
    if c.target.backend != "auto":
        return c.target.backend
    return "dla" if bundle_soc(c.bundle) else "auto"


def runtime(c: Checkup) -> Verdict:
    b, backend = c.board, backend_of(c)
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
        c.board_only(v, "no /dev/apusys* device: the APU driver is not loaded",
                     "load the APU driver (a Genio image with NeuroPilot: check `dmesg | grep -i apu`)")
    compiler = str((bundle_doc(c.bundle).get("dla") or {}).get("version") or "")
    v.figures["dla_compiler"] = compiler or None
    mismatch = version_warning(compiler, lib.get("version"))
    if mismatch and lib.get("kind") == "stand-in":
        v.warn(f"{mismatch} (expected: a STAND-IN runtime)")
    elif mismatch:
        return v.fail(mismatch, "compile with the NeuroPilot SDK that matches the board's runtime (the same major "
                      "version), or deploy the runtime the bundle was compiled for")
    v.decided_by = f"{lib['path']} ({lib.get('api')} of {'/'.join(lib['apis'])}, {lib.get('version') or 'no version'})"
    return v


def deployed_mode(t, root: str) -> str | None:
    """The deploy mode the board's manifest.json records (device/link/deploy.py writes it), None without one."""
    res = t.run(["cat", f"{root}/manifest.json"], timeout=60)
    try:
        return json.loads(res.text).get("backend") if res.rc == 0 else None
    except (ValueError, AttributeError):
        return None


def deploy_mode(backend: str) -> str:
    """The `whisperkv deploy --backend` mode that ships what `backend` reads (the registry's `deploy`)."""
    spec = REGISTRY.get(backend)
    return spec.deploy if spec is not None else "auto"


def deployed(c: Checkup) -> Verdict:
    """Every file of the runner and of the bundle on the board with this PC's sha256 (deploy's own lists)."""
    t = c.transport
    if t.label == "local" and Path(t.runner_dir).resolve() == ROOT:
        return Verdict(figures={"runner": "this checkout", "model": str(c.bundle or "the installed wheels")},
                       decided_by="the runner is this checkout, the model read in place")
    root = t.resolve(t.runner_dir or "~/whisperkv").rstrip("/")
    mode = deploy_mode(backend_of(c))
    if mode == "auto" and c.bundle is None:        # what was deployed there says which files to expect
        mode = deployed_mode(t, root) or mode
    with tempfile.TemporaryDirectory(prefix="whisperkv-doctor-") as tmp:
        files = bundle(c.bundle, mode, Path(tmp), board_arch(t))
        have = remote_hashes(t, root, [f.rel for f in files])
    missing = [f.rel for f in files if f.rel not in have]
    stale = [f.rel for f in files if f.rel in have and have[f.rel] != f.sha256]
    v = Verdict(figures={"dir": root, "files": len(files), "missing": missing, "changed": stale, "mode": mode})
    if missing or stale:
        named = "; ".join(x for x in (("changed since deploy: " + ", ".join(stale)) if stale else "",
                                      ("missing: " + ", ".join(missing)) if missing else "") if x)
        model = f" --model {c.bundle}" if c.bundle else ""
        return v.fail(f"{len(stale) + len(missing)} of {len(files)} files differ from this PC's ({named})",
                      f"deploy again: `whisperkv deploy --device URL --dir {root}{model} --backend {mode}`")
    v.decided_by = f"{len(files)} files match"
    return v
