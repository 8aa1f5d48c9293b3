"""The device panel's sentences (app/board/info_words.py) say the board's ABI, the runner deploy gives it and why,
and which runner answered."""
from __future__ import annotations

from app.board.info_words import sentences


def test_the_abi_the_runner_a_board_gets_and_the_runner_that_answered_are_said():
    said = sentences({"os": "Poky 5.0", "arch": "aarch64", "abi": "aarch64, glibc 2.39",
                      "board_runner": "native: no Python 3.10 or newer here; the native runner needs none",
                      "runner": "native"})
    assert said == ["It runs Poky 5.0 on aarch64. Its ABI: aarch64, glibc 2.39.",
                    "Deploy gives it the native runner (no Python 3.10 or newer here; the native runner needs none).",
                    "The native runner answers."]
    assert sentences({"runner": "not answering: link lost"}) == ["The runner is not answering: link lost."]
