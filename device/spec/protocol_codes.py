"""The host ⇄ runner wire protocol's constants, codes and limits (docs/protocol.md): what every runner reads, the
Python one by import (device/protocol.py frames with them) and a native one from the form device/spec/native_form.py
writes of this module (every upper-case name here goes into it).

Stdlib only: it ships to the board with the runner.
"""
import struct

# 2: one 30 s window per `transcribe` request, [1, 80, 3000]; the host seeks (core/decode/window_feed.py).
# 1 took a whole clip, [W, 80, 3000], and the runner sought; its `max_windows` is gone.
PROTOCOL = 2
RUNNER_VERSION = "0.1.0"

LENGTH_FORMAT = ">I"          # a frame's header length, in struct's notation: unsigned 32-bit big-endian
LENGTH_BYTES = struct.calcsize(LENGTH_FORMAT)
LENGTH_BYTE_ORDER = "big"
MAX_HEADER = 1 << 20          # 1 MiB of JSON is far beyond any legitimate header
MAX_PAYLOAD = 1 << 20         # 1 MiB: one window of float32 mel (960 000 bytes) and no more
N_MELS, N_FRAMES = 80, 3000
MEL_DTYPES = ("float16", "float32")
# What this runner takes beyond its protocol as first written, listed in `hello.features`; a host sends such a
# field only to a runner that lists it (an older runner would ignore it and answer something else).
FEATURES = ("prompt", "seek_timestamps", "draft", "samples", "probe")

# Error codes carried by `error` events.
BAD_FRAME = "bad_frame"              # header is not UTF-8 JSON object with a string "op"
FRAME_TOO_LARGE = "frame_too_large"  # header or payload over the limit; the bytes are skipped
UNKNOWN_OP = "unknown_op"
BAD_REQUEST = "bad_request"          # a field is missing or has the wrong type/value
BAD_MEL = "bad_mel"                  # wrong shape/dtype/size, or NaN/Inf values
BAD_PROTOCOL = "bad_protocol"        # hello asked for a protocol version we do not speak
BUSY = "busy"                        # a transcribe reused the id of a request still queued or running
MODEL_MISSING = "model_missing"      # the runner could not load its model
INTERNAL = "internal"                # the backend raised; the request ends, the runner keeps serving
# an `internal` error's fix: its message is "the runner failed unexpectedly (KIND: LINE) — INTERNAL_FIX"
INTERNAL_FIX = ("a bug in the runner: run `whisperkv doctor --device URL --out DIR` and send its report with the "
                "runner's log (its stderr); the runner keeps serving")
ERROR_CODES = (BAD_FRAME, FRAME_TOO_LARGE, UNKNOWN_OP, BAD_REQUEST, BAD_MEL, BAD_PROTOCOL,
               BUSY, MODEL_MISSING, INTERNAL)

REQUEST_OPS = ("hello", "transcribe", "probe", "cancel", "bye")
EVENT_TYPES = ("hello", "encoded", "token", "done", "sample", "npu_profile", "probe", "error")
