"""What was deployed on the board, and the doctor's `deployed` rung (ladder.py). Deploy leaves its record there
(device/deploy/deploy_record.py: every file shipped with its sha256, and the bundle's model.json), so the board is
checked without the PC's bundle: the runner's files against this PC's runner (the native runner as this PC builds it
for the board, where deploy recorded that one), the model's against the record, and, with --model, against this PC's
bundle too. Every rung that reads the bundle (identity's SoC, runtime's compiler
version, the backend checked) reads `model_doc`: --model's model.json, else the board's."""
from __future__ import annotations

import json
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.model.file_hash import sha256_files
from device import ROOT
from device.deploy.deploy import board_arch, bundle, runner_files
from device.deploy.deploy_record import RECORD, DeployRecord, read_json, read_record, remote_hashes
from device.deploy.native_deploy import runner_parts
from device.doctor.checkup import Checkup, Verdict
from device.link.runner_choice import NATIVE, PYTHON
from device.spec.backend_rows import ROWS


@dataclass
class Deployment:
    root: str                       # the runner's directory on the board
    record: DeployRecord | None     # what deploy recorded there, None: nothing deployed
    model_json: dict                # the board's model/model.json, else the record's copy ({}: no bundle)


def in_place(c: Checkup) -> bool:
    """The local runner of this checkout: nothing is deployed, the model is read where it is."""
    t = c.transport
    return t.label == "local" and Path(t.runner_dir).resolve() == ROOT


def deployment(c: Checkup) -> Deployment:
    """Read once a checkup, after reach opened the link."""
    if c.deployment is None:
        t = c.transport
        root = t.resolve(t.runner_dir or "~/whisperkv").rstrip("/")
        if in_place(c):
            c.deployment = Deployment(root, None, bundle_doc(c.target.model))
        else:
            record = read_record(t, root)
            doc = read_json(t, f"{root}/model/model.json")
            c.deployment = Deployment(root, record, doc or (record.model_json if record else None) or {})
    return c.deployment


def bundle_doc(bundle: str | Path | None) -> dict:
    """A bundle folder's model.json on this PC ({} for none, or none there)."""
    try:
        return json.loads((Path(bundle) / "model.json").read_text()) if bundle else {}
    except (OSError, ValueError):
        return {}


def model_doc(c: Checkup) -> dict:
    """The model.json of what the runner runs: --model's, else the board's (deploy's record when the file is gone)."""
    return bundle_doc(c.bundle) if c.bundle is not None else deployment(c).model_json


def bundle_soc(doc: dict) -> str | None:
    """The SoC a compiled bundle's .dla graphs were built for (model.json's dla.soc), None for none."""
    return (doc.get("dla") or {}).get("soc") or None


def backend_of(c: Checkup) -> str:
    """The backend the doctor checks: the target's, else dla for a compiled bundle, else what deploy shipped for."""
    if c.target.backend != "auto":
        return c.target.backend
    if bundle_soc(model_doc(c)):
        return "dla"
    record = deployment(c).record if c.transport is not None and not in_place(c) else None
    return record.backend if record is not None and record.backend in ROWS else "auto"


def deploy_mode(backend: str) -> str:
    """The `whisperkv deploy --backend` mode that ships what `backend` reads (the registry's `deploy`)."""
    spec = ROWS.get(backend)
    return spec.deploy if spec is not None else "auto"


def deploy_line(c: Checkup, mode: str) -> str:
    """The `whisperkv deploy` line that puts this PC's runner and the model back on the board."""
    d = deployment(c)
    source = str(c.bundle) if c.bundle else (d.record.model_source if d.record else None)
    if source and not Path(source).is_dir():
        source = None
    model = f" --model {shlex.quote(source)}" if source else " --model DIR" if mode == "dla" else ""
    where = "" if c.target.url.dir else f" --dir {shlex.quote(d.root)}"
    runner = " --runner native" if runner_of(d) == NATIVE and not c.target.runner else ""
    return f"whisperkv deploy --device {shlex.quote(c.target.text())}{where}{model} --backend {mode}{runner}"


def runner_of(d: Deployment) -> str:
    """The runner deploy left on the board (python where it recorded none)."""
    return d.record.runner if d.record is not None else PYTHON


def deployed(c: Checkup) -> Verdict:
    """The runner's files as this PC's, the model's as deploy recorded them (and, with --model, as this PC's)."""
    if in_place(c):
        return Verdict(figures={"runner": "this checkout", "model": str(c.bundle or "the installed wheels")},
                       decided_by="the runner is this checkout, the model read in place")
    t, d = c.transport, deployment(c)
    mode = deploy_mode(backend_of(c))
    if mode == "auto" and d.record is not None:
        mode = d.record.backend
    v = Verdict(figures={"dir": d.root, "mode": mode, "against": "this PC's bundle" if c.bundle else RECORD})
    if d.record is None and c.bundle is None:
        return v.fail(f"nothing deployed in {d.root} on {t.label} (no {RECORD})", f"deploy: `{deploy_line(c, mode)}`")
    recorded = d.record.model_files() if d.record else {}
    with tempfile.TemporaryDirectory(prefix="whisperkv-doctor-") as tmp:
        arch, native, android = board_arch(t), runner_of(d) == NATIVE, bool(t.android())
        runner = ({rel: sha256_files(sources) for rel, sources in runner_parts(arch, android)} if native else
                  {f.rel: f.sha256 for f in runner_files(arch)})
        pc = {f.rel: f.sha256 for f in bundle(c.bundle, mode, Path(tmp), arch, runner_of(d), android)
              if f.rel.startswith("model/")} if c.bundle is not None else {}
    want = runner | (pc or recorded)
    have = remote_hashes(t, d.root, sorted(want), python=not native)
    missing = [rel for rel in sorted(want) if rel not in have]
    stale = [rel for rel in sorted(runner) if rel in have and have[rel] != runner[rel]]
    edited = [rel for rel in sorted(recorded) if rel in have and have[rel] != recorded[rel]]
    other = [rel for rel in sorted(pc) if rel in have and have[rel] != pc[rel] and rel not in edited]
    v.figures |= {"files": len(want), "missing": missing, "stale_runner": stale, "changed": edited + other,
                  "not_this_pcs_bundle": other}
    said = [f"{what}: {', '.join(rels)}" for what, rels in (
        ("the runner differs from this PC's", stale), ("changed since deploy", edited),
        ("not --model's", other), ("missing", missing)) if rels]
    if said:
        wrong = len(stale) + len(edited) + len(other) + len(missing)
        return v.fail(f"{wrong} of {len(want)} files differ ({'; '.join(said)})",
                      f"deploy again: `{deploy_line(c, mode)}`")
    v.decided_by = f"{len(want)} files match " + ("this PC's runner and bundle" if c.bundle else
                                                   "this PC's runner and the model deploy recorded")
    return v
