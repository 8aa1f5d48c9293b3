"""Where the model runs and how the host reaches it: wire protocol, board runner, transports, deploy.

Nothing here imports Qt; the runner path (protocol, agent, backends) needs only NumPy, tokenizers
and core's model and decoding, so it runs on a bare aarch64 board.
"""
