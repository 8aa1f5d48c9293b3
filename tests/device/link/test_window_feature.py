"""The `window_s` request field end to end: a runner that lists `windows` in its hello encodes the length asked for
and says so on `encoded`; a runner without the list (an older one, the native runner) is sent no window_s and
encodes 30 s."""
from core.decode.options import DecodeOptions
from core.model.dims import WINDOWS_S
from device import protocol as P
from device.link.runner_info import RunnerInfo


def sent_headers(monkeypatch):
    headers = []
    real = P.encode_frame
    monkeypatch.setattr(P, "encode_frame", lambda header, payload=b"": headers.append(header) or real(header, payload))
    return headers


def encoded(arrivals):
    return next(a.event for a in arrivals if a.event.type == "encoded")


def test_hello_without_windows_reads_as_30_s():
    assert RunnerInfo.from_hello({}).windows == (30,)
    assert RunnerInfo.from_hello({"windows": "10"}).windows == (30,)
    assert RunnerInfo.from_hello({"windows": [10, 20, 30]}).windows == (10, 20, 30)


def test_a_listed_window_is_asked_for_and_reported(local_client, en_mel, monkeypatch):
    assert local_client.info.windows == WINDOWS_S
    headers = sent_headers(monkeypatch)
    arrivals = list(local_client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=3, window_s=20),
                                            n_frames=1100))
    assert encoded(arrivals).window_s == 20 and arrivals[-1].final
    assert [h["window_s"] for h in headers if h.get("op") == "transcribe"] == [20]


def test_a_runner_without_the_list_gets_no_window_s_and_encodes_30_s(local_client, en_mel, monkeypatch):
    raw = local_client.info.raw
    local_client.info.raw = {k: v for k, v in raw.items() if k != "windows"}      # as an older runner's hello
    headers = sent_headers(monkeypatch)
    try:
        arrivals = list(local_client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=3, window_s=10),
                                                n_frames=1100))
        assert encoded(arrivals).window_s == 30 and arrivals[-1].final
        assert [h for h in headers if h.get("op") == "transcribe" and "window_s" in h] == []
    finally:
        local_client.info.raw = raw
