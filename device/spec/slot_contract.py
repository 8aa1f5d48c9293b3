"""The model.json slot contract: what `whisperkv compile` (device/toolchain/compile.py) records of a bundle's
compiled graphs and the dla backend (device/runner/neuron/neuron_slots.py) reads back at load. A native runner reads
the same names from the form device/spec/native_form.py writes of this module (every upper-case name here).

model.json's CONTRACT_SECTION holds CONTRACT_FIELDS; its "graphs" hold, per graph, GRAPH_FIELDS; each of a graph's
SLOT_KINDS lists its slots in the compiler's order, each with SLOT_FIELDS (an integer slot's "scale" and
"zero_point" only where its dtype is one of INT_SLOT_DTYPES).

Stdlib only: it ships to the board with the runner.
"""

BUNDLE_FORMAT = "whisperkv-mtk-bundle"    # model.json's "format": what makes a folder an exported bundle
CONTRACT = 1                  # a bundle recording another version is refused at load, with the command to recompile
CONTRACT_SECTION = "dla"
# A shorter encoder window's graph (`whisperkv export --windows`): its .tflite, its .dla and its key in "graphs", in
# printf form (encoder_10s); the 30 s window's is "encoder".
WINDOW_GRAPH = "encoder_%ds"
CONTRACT_FIELDS = ("contract", "compiler", "version", "soc", "flags", "graphs")
GRAPH_FIELDS = ("file", "from", "sha256", "flags", "inputs", "outputs", "alignment_heads")
SLOT_KINDS = ("inputs", "outputs")
SLOT_FIELDS = ("name", "shape", "dtype", "scale", "zero_point")
# The `.tflite` TensorType names a slot may have: an integer slot keeps its own type, a float one is fed in the
# element size the runtime reports (2 bytes fp16, 4 bytes fp32).
INT_SLOT_DTYPES = ("INT8", "INT16", "UINT8")
FLOAT_SLOT_DTYPES = ("FLOAT32", "FLOAT16")
