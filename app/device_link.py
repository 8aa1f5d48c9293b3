"""From a device profile to a BoardClient: the app's only way to reach a runner (local, SSH or ADB)."""
from __future__ import annotations

from device.client import BoardClient
from device.connect import open_client, open_transport
from device.transport import Transport

from app.device_profile import DeviceProfile


def make_transport(profile: DeviceProfile, password: str = "") -> Transport:
    return open_transport(profile.url(), trust_host_key=profile.trust_host_key or None, password=password or None)


def make_client(profile: DeviceProfile, password: str = "") -> BoardClient:
    return open_client(profile.url(), trust_host_key=profile.trust_host_key or None, password=password or None)
