"""Errors the user can act on: each names the problem and the fix."""


class WhisperKVError(Exception):
    """Base class. `str(err)` is one line: the problem, then what to do about it."""

    code = "error"

    def __init__(self, problem: str, fix: str = ""):
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} — {fix}" if fix else problem)


class AudioError(WhisperKVError):
    code = "bad_audio"


class ModelError(WhisperKVError):
    code = "model_missing"


class FeatureError(WhisperKVError):
    code = "bad_mel"
