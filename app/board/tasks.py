"""Blocking device chores the device panel runs on a background thread: test connection and deploy."""
from __future__ import annotations

from typing import Callable

from app.board.link import make_decoder, make_transport
from device.deploy.deploy import deploy as deploy_to
from device.link.profile import DeviceProfile


def test_connection(profile: DeviceProfile, password: str = "") -> dict:
    """The device-info report; when the runner answers too, its hello (backend, model hash) is added."""
    info: dict = {"device": profile.url()}
    transport = make_transport(profile, password)
    try:
        from device.info.info import device_info  # here, in the try: an older device package has none
        info.update(device_info(transport))
    except ImportError:
        pass  # an older device package without device-info: the runner's hello still says a lot
    finally:
        transport.close()
    decoder = make_decoder(profile, password)
    try:
        info.update(decoder.connect().summary())
    except Exception as exc:
        if len(info) == 1:
            raise
        info["runner"] = f"not answering: {exc}"
    finally:
        decoder.close()
    return info


def deploy(profile: DeviceProfile, password: str = "", progress: Callable[[int, int], None] | None = None) -> dict:
    transport = make_transport(profile, password)
    try:
        result = deploy_to(transport, progress=progress, runner=profile.target.runner)
    finally:
        transport.close()
    return result if isinstance(result, dict) else {"deployed": str(result)}
