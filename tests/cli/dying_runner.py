"""A runner that dies mid-stream, for `?python=` of a local device URL: it starts the real runner
(`python -m device.runner ARGS`) and passes its frames through, then kills it (SIGKILL, as the OOM killer
would) and exits right after forwarding the token of step DIE_STEP of the DIE_ENCODED-th encoded window
(environment; the host sends one request per window, so that is the window's index + 1)."""
import os
import subprocess
import sys
import threading

from device import protocol as P


def main() -> None:
    die_encoded, die_step = int(os.environ["DIE_ENCODED"]), int(os.environ["DIE_STEP"])
    encoded = 0
    runner = subprocess.Popen([sys.executable, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def forward_requests():
        while data := os.read(0, 1 << 16):
            runner.stdin.write(data)
            runner.stdin.flush()

    threading.Thread(target=forward_requests, daemon=True).start()
    parser = P.FrameParser()
    while data := os.read(runner.stdout.fileno(), 1 << 16):
        for frame in parser.feed(data):
            h = frame.header
            os.write(1, P.encode_frame({k: v for k, v in h.items() if k != "payload_bytes"}, frame.payload))
            encoded += h.get("type") == "encoded"
            if h.get("type") == "token" and encoded == die_encoded and h.get("step") == die_step:
                runner.kill()
                os._exit(137)


if __name__ == "__main__":
    main()
