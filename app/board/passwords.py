"""Passwords go to the system keyring when one is available; otherwise they are kept only in memory."""
from __future__ import annotations

SERVICE = "whisperkv-studio"


def _keyring():
    try:
        # imported here, in the try: keyring is optional, and loading it may fail on a desktop without one
        import keyring
        from keyring.backends import fail

        if isinstance(keyring.get_keyring(), fail.Keyring):
            return None
        return keyring
    except Exception:  # no keyring package, or no usable backend on this desktop
        return None


def can_store() -> bool:
    return _keyring() is not None


def store(key: str, password: str) -> bool:
    kr = _keyring()
    if kr is None or not password:
        return False
    try:
        kr.set_password(SERVICE, key, password)
        return True
    except Exception:
        return False


def load(key: str) -> str:
    kr = _keyring()
    if kr is None:
        return ""
    try:
        return kr.get_password(SERVICE, key) or ""
    except Exception:
        return ""
