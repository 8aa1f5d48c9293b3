"""The recipe for a rung (docs/doctor.md, "Adding a rung"): a function that takes the Checkup and returns a Verdict,
and one row in ladder.py's RUNGS that names it by reference. Here the one row is a toy's, after reach: the ladder
climbs it in order, and `whisperkv doctor`'s lines, doctor.json and doctor.html show it there; failing, it stops the
climb with its one line and its fix. The runner named has no Python, so the real rungs stop at identity, after the
toy, without starting a runner."""
from __future__ import annotations

import json

from cli.main import main
from device.doctor import ladder
from device.doctor.checkup import MARKS, Checkup, Rung, Verdict
from device.doctor.rungs_board import PYTHON_FIX

REAL = ladder.RUNGS


def squeaks(c: Checkup) -> Verdict:
    return Verdict(figures={"squeaks": 3, "link": c.transport.label}, decided_by="the toy squeaks 3 times")


def silent(c: Checkup) -> Verdict:
    return Verdict(figures={"squeaks": 0}).fail("the toy is silent", "squeeze the toy")


def add_toy(monkeypatch, check) -> None:
    """The recipe's one row, after reach."""
    monkeypatch.setattr(ladder, "RUNGS", (REAL[0], Rung("toy", "that the toy squeaks", check, "a squeak"), *REAL[1:]))


def doctor(capsys, tmp_path) -> tuple[int, dict, list[str], str]:
    """The exit status, doctor.json, the rung lines (stderr under --json) and doctor.html."""
    device = f"local?backend=numpy&python={tmp_path / 'no-python'}"
    code = main(["doctor", "--device", device, "--json", "--out", str(tmp_path / "report")])
    said = capsys.readouterr()
    page = (tmp_path / "report" / "doctor.html").read_text()
    assert json.loads((tmp_path / "report" / "doctor.json").read_text()) == json.loads(said.out)
    return code, json.loads(said.out), said.err.splitlines(), page


def names_in(lines: list[str]) -> list[str]:
    return [line.split()[1] for line in lines if line[:1] in MARKS.values()]


def test_a_toy_rung_added_as_one_row_is_climbed_and_shown_in_order(capsys, tmp_path, monkeypatch):
    add_toy(monkeypatch, squeaks)
    code, doc, lines, page = doctor(capsys, tmp_path)
    order = ["reach", "toy", *(r.name for r in REAL[1:])]
    assert [r["name"] for r in doc["rungs"]] == names_in(lines) == order
    by = {r["name"]: r for r in doc["rungs"]}
    assert by["toy"]["status"] == "pass" and by["toy"]["figures"] == {"squeaks": 3, "link": "local",
                                                                      "decided_by": "the toy squeaks 3 times"}
    assert f"{MARKS['pass']} toy       the toy squeaks 3 times" in lines
    assert by["identity"]["status"] == "fail" and by["identity"]["fix"] == PYTHON_FIX and code == 1
    assert [by[r.name]["status"] for r in REAL[2:]] == ["not-run"] * (len(REAL) - 2)
    rows = [page.index(f"<td>{name}</td>") for name in order]
    assert rows == sorted(rows) and "the toy squeaks 3 times" in page


def test_a_failing_toy_rung_stops_the_climb_with_its_one_line_and_fix(capsys, tmp_path, monkeypatch):
    add_toy(monkeypatch, silent)
    code, doc, lines, page = doctor(capsys, tmp_path)
    assert code == 1
    assert [(r["name"], r["status"]) for r in doc["rungs"]] == \
        [("reach", "pass"), ("toy", "fail")] + [(r.name, "not-run") for r in REAL[1:]]
    at = lines.index(f"{MARKS['fail']} toy       the toy is silent")
    assert lines[at + 1] == "    fix: squeeze the toy" and lines[at + 2].startswith(f"{MARKS['not-run']} identity")
    assert doc["rungs"][1]["fix"] == "squeeze the toy"
    assert "stopped at <b class='fail'>toy</b>: the toy is silent" in page and "squeeze the toy" in page
