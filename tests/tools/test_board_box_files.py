"""What tools/board_box writes, checked without root or emulation: the Genio 520's cpuinfo and memory as the
runner reads them, the offline switch's files and their undoing, and the rootfs cache key following the
STAND-IN Neuron runtime's sources (so an edited stand-in is rebuilt into the box)."""
from __future__ import annotations

import shutil

from device.info.cpu_name import cpu_name
from device.runner.serve import sampler
from tests.device.runner.standin import build as standin_build
from tools.board_box import identity, offline, rootfs


def test_the_cpuinfo_names_the_evks_eight_cores():
    text = identity.cpuinfo()
    assert text.count("processor\t:") == 8
    assert cpu_name(text) == "6x Cortex-A55 + 2x Cortex-A78"


def test_the_meminfo_is_the_evks_3_7_gib_where_the_sampler_reads_it(monkeypatch):
    fields = dict(line.split(":") for line in identity.meminfo().splitlines())
    assert int(fields["MemTotal"].split()[0]) // 1024 == 3788          # 3.7 GiB in MiB, as device-info prints it
    monkeypatch.setattr(sampler, "_read", lambda p: identity.meminfo() if p == "/proc/meminfo" else None)
    assert 0 < sampler.mem_available_mb() < 3788.8


def test_offline_names_a_dead_nameserver_and_index_and_online_restores_the_box(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "resolv.conf").write_text("nameserver 10.0.0.2\n")
    offline.cut_off(tmp_path, "127.83.71.1")
    offline.cut_off(tmp_path, "127.83.71.1")          # twice: the PC's nameserver is still kept to restore
    assert offline.is_offline(tmp_path)
    assert "nameserver 127.83.71.1" in (etc / "resolv.conf").read_text()
    assert "index-url = http://127.83.71.1:9/simple/" in (etc / "pip.conf").read_text()
    offline.reconnect(tmp_path)
    assert (etc / "resolv.conf").read_text() == "nameserver 10.0.0.2\n" and not (etc / "pip.conf").exists()
    assert not offline.is_offline(tmp_path)


def test_an_edited_standin_source_changes_the_rootfs_tarball_but_not_its_base(tmp_path, monkeypatch):
    before, base = rootfs.tarball(), rootfs.base_tarball()
    copy = tmp_path / "standin"
    shutil.copytree(standin_build.HERE, copy)
    monkeypatch.setattr(standin_build, "HERE", copy)
    assert rootfs.tarball() == before
    (copy / standin_build.SOURCES[0]).write_text((copy / standin_build.SOURCES[0]).read_text() + "\n")
    assert rootfs.tarball() != before and rootfs.base_tarball() == base
