"""What the dla path tells the user to do when a bundle, a graph or the runtime refuses: the same words from the
Python runner and, through the spec's C header (device/spec/native_form.py), the native one. Standard library only."""

EXPORT_FIX = "re-create it with `whisperkv export --out DIR`"
NO_DLA_FIX = "compile the bundle with `whisperkv compile DIR` and deploy it with `whisperkv deploy --backend dla`"
SLOT_FIX = ("recompile it with this whisperkv: `whisperkv compile DIR --soc SOC`, then `whisperkv deploy "
            "--backend dla --model DIR`")
CREATE_FIX = "check that the APU driver is loaded (/dev/apusys*) and that this is MediaTek's runtime for this SoC"
DLA_FIX = ("check that the .dla was compiled for this SoC (`whisperkv compile --soc auto --device URL`) by an "
           "ncc-tflite of the runtime's major version, and that the APU driver is loaded")
RUN_FIX = "the decode stopped here; retry, and if it persists check the APU driver's log (dmesg) on the board"
V2_CONVERTS = ("Neuron Runtime V2 has no public way to suppress the runtime's conversion, so the slots are fed "
               "converted (the .tflite's own types and sizes)")
