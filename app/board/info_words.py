"""What Test connection, Deploy and a failure report about a device, in sentences for the device panel (it printed
the reports' raw Python dicts). Reads the device-info report (device/info/info.py), the runner's hello summary
(device/link/runner_info.py) and deploy's result; a field it does not know is still said, as "name: value"."""
from __future__ import annotations

from typing import Callable


def _words(value) -> str:
    """A value in words: a list joined, a dict as "name value" pairs, None as absent, a flag as yes or no."""
    if value is None or value == "" or value == [] or value == {}:
        return "absent"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_words(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_words(v)}" for k, v in value.items())
    return str(value)


def _have(info: dict, *keys: str) -> bool:
    return any(k in info for k in keys)


def _system(i: dict) -> str:
    os_ = i.get("os") or "an unknown system"
    kernel = f" (kernel {i['kernel']})" if i.get("kernel") else ""
    arch = f" on {i['arch']}" if i.get("arch") else ""
    cpus = f", {i['cpu_count']} cores" if i.get("cpu_count") else ""
    cpu = f" ({i['cpu']}{cpus})" if i.get("cpu") else cpus
    abi = f" Its ABI: {i['abi']}." if i.get("abi") else ""
    return f"It runs {os_}{kernel}{arch}{cpu}.{abi}"


def _soc(i: dict) -> str:
    soc = i.get("soc")
    if isinstance(soc, dict):
        name, npu = soc.get("name", "unknown"), soc.get("npu", "unknown")
        if name == "unknown":
            return "Its SoC was not recognised."
        return f"Its SoC is {name}" + (f", with the {npu} NPU." if npu != "unknown" else ".")
    return f"Its SoC is {soc}." if soc else "Its SoC was not recognised."


def _memory(i: dict) -> str:
    total, free = i.get("mem_total_mb"), i.get("mem_free_mb")
    if total and free is not None:
        return f"{free} MB of its {total} MB of memory are free."
    return f"It has {total} MB of memory." if total else "Its memory could not be read."


def _packages(i: dict) -> str:
    names = {"python": "Python", "numpy": "NumPy", "onnxruntime": "ONNX Runtime", "compiler": "a C compiler"}
    have = [f"{name} {i[k]}" if k != "compiler" else f"{name} ({i[k]})" for k, name in names.items() if i.get(k)]
    lack = [name.removeprefix("a ") for k, name in names.items() if k in i and not i.get(k)]
    return " ".join(filter(None, (f"It has {', '.join(have)}." if have else "",
                                  f"It has no {', no '.join(lack)}." if lack else "")))


def _board_runner(i: dict) -> str:
    """device-info's "native: no Python 3.10 or newer here; …": the runner deploy gives the board, and why."""
    runner, _, why = str(i["board_runner"]).partition(": ")
    return f"Deploy gives it the {runner} runner ({why})." if why else f"Deploy gives it the {runner} runner."


def _runner_dir(i: dict) -> str:
    where = i.get("runner_dir") or i.get("dir")
    if i.get("runner_version") and where:
        return f"The runner {i['runner_version']} is deployed in {where}."
    return f"No runner is deployed in {where}." if where else ""


def _model(i: dict) -> str:
    sha = i.get("model_sha256") or ""
    named = f"The model is {i['model']}" if i.get("model") else "The model"
    form = " ".join(filter(None, (i.get("dtype"), i.get("cross") and f"{i['cross']} cross")))
    return (f"{named}{' (' + form + ')' if form else ''}, sha256 {sha}" if sha
            else f"{named} was not found") + "."


def _npu(i: dict) -> str:
    parts = [f"Its NPU devices: {_words(i['npu'])}." if i.get("npu") else "It shows no NPU device (/dev/apusys*)."]
    if i.get("npu_ready"):
        ready = str(i["npu_ready"])
        parts.append(f"The NPU cannot be used: {ready.removeprefix('no: ')}." if ready.startswith("no")
                     else f"The NPU can be used through {ready}.")
    if i.get("neuron_delegates"):
        parts.append(f"Neuron delegates: {_words(i['neuron_delegates'])}.")
    if i.get("tflite_used"):
        parts.append(f"TFLite runs with {i['tflite_used']}.")
    return " ".join(parts)


def _backend(i: dict) -> str:
    ran_on = i.get("ran_on") or {}
    placed = ran_on.get("label") or ran_on.get("short") if isinstance(ran_on, dict) else ""
    where = f", its graphs on {placed}" if placed else ""
    version = f", protocol {i['protocol']}" if i.get("protocol") else ""
    return f"The runner answers with the {i.get('backend', '?')} backend{where}{version}."


def _cache(i: dict) -> str:
    per = f", {i['bytes_per_token'] / 1e3:.1f} kB a token" if i.get("bytes_per_token") else ""
    return f"Its decoder cache holds {i.get('cache_max_len')} positions{per}."


def _uploaded(i: dict) -> str:
    n, skipped = len(i.get("uploaded") or []), len(i.get("skipped") or [])
    size = f" ({i['bytes'] / 1e6:.1f} MB in all)" if i.get("bytes") else ""
    how = f" by {i['upload']}" if i.get("upload") else ""
    return f"Deployed: {n} file{'s' if n != 1 else ''} uploaded{how}, {skipped} already there{size}."


# (the keys a sentence says, the sentence): in the order they are read out.
SENTENCES: list[tuple[tuple[str, ...], Callable[[dict], str]]] = [
    (("testing",), lambda i: f"Testing {i['testing']}…"),
    (("failed",), lambda i: f"Failed: {i['failed']}"),
    (("device",), lambda i: f"Device {i['device']}."),
    (("os", "kernel", "arch", "abi", "cpu", "cpu_count"), _system),
    (("soc",), _soc),
    (("mem_total_mb", "mem_free_mb"), _memory),
    (("python", "numpy", "onnxruntime", "compiler"), _packages),
    (("board_runner",), _board_runner),
    (("runner_dir", "dir"), _runner_dir),
    (("uploaded", "skipped", "bytes", "upload"), _uploaded),
    (("model", "model_sha256", "dtype", "cross"), _model),
    (("npu", "npu_ready", "neuron_delegates", "tflite_used", "neuronrt", "ncc_tflite", "neuron_runtime", "tflite"),
     _npu),
    (("backend", "ran_on", "protocol"), _backend),
    (("cache_max_len", "bytes_per_token"), _cache),
    (("runner",), lambda i: f"The {i['runner']} runner answers." if i["runner"] in ("python", "native")
     else f"The runner is {i['runner']}."),
    (("runner_version",), lambda i: "" if i.get("runner_dir") or i.get("dir") else
     f"The runner is version {i['runner_version']}."),
]


def sentences(info: dict) -> list[str]:
    """The report as sentences, one a line; the fields no sentence says, as "name: value" after them."""
    said: set[str] = set()
    out = []
    for keys, say in SENTENCES:
        if _have(info, *keys):
            said.update(keys)
            text = say(info)
            if text:
                out.append(text)
    out += [f"{k.replace('_', ' ').capitalize()}: {_words(v)}." for k, v in info.items() if k not in said]
    return out
