"""The SoC table and the board's SoC as the runner reads it: from a device tree, soc0, or getprop."""
import os

from device.spec import soc
from device.toolchain.compile import COMMON_FLAGS, RELAX_FLAGS, flags_for


def _tree(tmp_path, files: dict[str, bytes]):
    for rel, data in files.items():
        p = tmp_path / rel.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return str(tmp_path)


def test_table_rows_and_flags():
    assert soc.SOCS["MT8371"]["npu"] == soc.SOCS["MT8391"]["npu"] == "MDLA 5.3"
    assert soc.SOCS["MT8390"]["npu"] == soc.SOCS["MT8370"]["npu"] == "MDLA 3.0"
    assert soc.SOCS["MT8395"]["npu"] == "MDLA 2.0"
    assert all(row["source"] for row in soc.SOCS.values())
    # the public port's spelling: --l1-size-kb / --num-mdla, not --l1 / --mdla
    assert flags_for("mt8371") == ["--arch=mdla5.3,edma3.6", "--l1-size-kb=256", "--num-mdla=1"] + RELAX_FLAGS \
        + COMMON_FLAGS
    assert flags_for("MT8390")[0] == "--arch=mdla3.0"


def test_device_tree_compatible_names_the_soc(tmp_path):
    root = _tree(tmp_path, {"/sys/firmware/devicetree/base/compatible":
                            b"mediatek,mt8371-evk\0mediatek,mt8371\0mediatek,mt8189\0"})
    got = soc.board_soc(root)
    assert (got["name"], got["npu"], got["read_from"]) == ("MT8371", "MDLA 5.3",
                                                           "/sys/firmware/devicetree/base/compatible")


def test_soc0_and_a_soc_the_table_lacks(tmp_path):
    assert soc.board_soc(_tree(tmp_path / "a", {"/sys/devices/soc0/soc_id": b"MT8390\n"}))["npu"] == "MDLA 3.0"
    got = soc.board_soc(_tree(tmp_path / "b", {"/proc/device-tree/compatible": b"mediatek,mt6991\0"}))
    assert (got["name"], got["npu"], got["flags"]) == ("MT6991", "unknown", [])


def test_nothing_named_is_unknown(tmp_path):
    assert soc.board_soc(str(tmp_path))["name"] == "unknown"


def test_getprop_on_android(tmp_path, monkeypatch):
    # a stand-in for Android's getprop (no Android device here): prints the property asked for
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    getprop = bin_dir / "getprop"
    getprop.write_text('#!/bin/sh\n[ "$1" = ro.board.platform ] && echo mt8395\n')
    getprop.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    got = soc.board_soc(str(tmp_path / "empty"))
    assert (got["name"], got["read_from"]) == ("MT8395", "getprop ro.board.platform")


def test_a_family_answers_only_where_no_member_is_named(tmp_path):
    # an Android image of an MT8371 names its platform mt8189: the family's row, with the members' NPU
    got = soc.board_soc(_tree(tmp_path / "a", {"/sys/devices/soc0/family": b"MT8189\n"}))
    assert (got["name"], got["npu"], got["flags"]) == ("MT8189", "MDLA 5.3", ["--arch=mdla5.3,edma3.6"])
    # named first, the family still gives way to a member named after it
    got = soc.board_soc(_tree(tmp_path / "b", {"/proc/device-tree/compatible": b"mediatek,mt8189\0mediatek,mt8391\0"}))
    assert got["name"] == "MT8391"
