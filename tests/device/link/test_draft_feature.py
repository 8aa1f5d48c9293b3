"""The `draft` request field end to end: the runner takes the previous tokens as a draft and answers with the
tokens it would give without one; a runner that does not list the feature is sent the request without it."""
from core.decode.options import DecodeOptions
from device import protocol as P


def tokens(arrivals):
    return [a.event.token for a in arrivals if a.event.type == "token"]


def sent_headers(client, monkeypatch):
    headers = []
    real = P.encode_frame
    monkeypatch.setattr(P, "encode_frame", lambda header, payload=b"": headers.append(header) or real(header, payload))
    return headers


def test_a_draft_gives_the_same_tokens_as_none(local_client, en_mel, monkeypatch):
    assert "draft" in local_client.info.features
    plain = tokens(local_client.transcribe(en_mel, DecodeOptions(language="en")))
    headers = sent_headers(local_client, monkeypatch)
    wrong = plain[:5] + [plain[5] + 1] + plain[6:]
    for draft in (plain[:-1], wrong):
        got = tokens(local_client.transcribe(en_mel, DecodeOptions(language="en", draft=draft)))
        assert got == plain and len(plain) > 10
    assert [h.get("draft") for h in headers if h.get("op") == "transcribe"] == [plain[:-1], wrong]


def test_no_draft_goes_to_a_runner_without_the_feature(local_client, en_mel, monkeypatch):
    features = local_client.info.features
    local_client.info.features = ("prompt", "seek_timestamps")          # as an older runner's hello says
    headers = sent_headers(local_client, monkeypatch)
    try:
        arrivals = list(local_client.transcribe(en_mel, DecodeOptions(language="en", max_tokens=3, draft=[1000] * 9)))
        assert arrivals[-1].final and tokens(arrivals)
        assert [h for h in headers if h.get("op") == "transcribe" and "draft" in h] == []
    finally:
        local_client.info.features = features
