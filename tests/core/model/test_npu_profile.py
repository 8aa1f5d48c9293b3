"""Reading the Neuron profiler's reports: tables as MediaTek documents them (title, "Total Execution Time" subheader,
the documented columns), the finest breakdown chosen, several requests merged per graph."""
from __future__ import annotations

import pytest

from core.model.npu_profile import finest, graph_profile, profile_text, profiles, read_tables, write_reports

COLUMNS = "Time,Ratio,ExeTimes,Time/Inf.,Description,GraphIdx,ExeIdx"


def report(ops: dict[str, float], runs: int = 2, history: bool = False) -> str:
    total = sum(ops.values())
    out = ["Runtime Status (LEVEL 1) - Summary", f"Total Execution Time: {total} ms over {runs} times inference.",
           COLUMNS, f"{total},1.0,{runs},{total / runs},Inference,0,", "",
           "Operations (LEVEL 2) - Breakdown", f"Total Execution Time: {total} ms over {runs} times inference.",
           COLUMNS]
    out += [f"{ms},{ms / total},{runs},{ms / runs},\"{name}\",0," for name, ms in ops.items()]
    if history:      # an execution history: more rows than any breakdown, each with its ExeIdx
        out += ["", "Execution time history", "Total Execution Time: 9 ms over 9 times inference.", COLUMNS]
        out += [f"1.0,0.1,1,,Inference,0,{i}" for i in range(9)]
    return "\n".join(out) + "\n"


def test_the_tables_their_totals_and_rows_are_read():
    tables = read_tables(report({"#0 FULLY_CONNECTED": 6.0, "#1 SOFTMAX": 2.0}))
    assert [t.title for t in tables] == ["Runtime Status (LEVEL 1) - Summary", "Operations (LEVEL 2) - Breakdown"]
    assert tables[1].total_ms == 8.0 and tables[1].inferences == 2
    assert [r["Description"] for r in tables[1].rows] == ["#0 FULLY_CONNECTED", "#1 SOFTMAX"]


def test_the_finest_breakdown_is_chosen_and_an_execution_history_is_not():
    tables = read_tables(report({f"#{i} ADD": 1.0 for i in range(3)}, history=True))
    assert finest(tables).title == "Operations (LEVEL 2) - Breakdown"


def test_per_op_time_is_per_inference_slowest_first_and_requests_merge():
    one = report({"#0 FULLY_CONNECTED": 6.0, "#1 SOFTMAX": 2.0}, runs=2)
    two = report({"#0 FULLY_CONNECTED": 10.0, "#1 SOFTMAX": 2.0}, runs=2)
    p = graph_profile("decoder_step", [one, two])
    assert p.inferences == 4 and p.ms_per_inference == pytest.approx(5.0)
    assert [(o.name, o.ms) for o in p.ops] == [("#0 FULLY_CONNECTED", 4.0), ("#1 SOFTMAX", 1.0)]
    assert p.ops[0].share == pytest.approx(0.8)


def test_graphs_are_named_by_their_file_encoder_first_and_a_report_without_a_breakdown_is_left_out():
    found = profiles([("w00-decoder_step.csv", report({"#0 ADD": 1.0})),
                      ("w00-encoder.csv", report({"#0 CONV_2D": 3.0})),
                      ("delegate.csv", "nothing to read\n")])
    assert [p.graph for p in found] == ["encoder", "decoder_step"]
    text = profile_text(found)
    assert text.splitlines()[0].startswith("encoder (one window): 1.50 ms an inference over 2")
    assert "decoder step (one token)" in text and "#0 CONV_2D" in text


def test_the_reports_are_written_as_they_came_a_file_each_window(tmp_path):
    written = write_reports([{"window": 0, "files": [{"name": "encoder.csv", "text": "a"}]},
                             {"window": 1, "files": [{"name": "encoder.csv", "text": "b"}]}], tmp_path / "p")
    assert [p.name for p in written] == ["w00-encoder.csv", "w01-encoder.csv"] and written[1].read_text() == "b"
