"""Where the model runs and how the host reaches it: wire protocol, board runner, transports, deploy.

Nothing here imports Qt; the runner path (protocol, agent, backends) needs only NumPy and core's model and
decoding (the tokenizer is read with the standard library), so it runs on a bare aarch64 board.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent   # the directory holding device/ and core/ (a checkout, or a deploy)
