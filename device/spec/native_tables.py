"""The native tables' format: what `whisperkv export` writes into every bundle so that a runner in another language
needs neither tokenizer.json nor NumPy (device/toolchain/native_tables.py writes them; docs/native-tables.md
describes them). A native runner reads the same names from the form device/spec/native_form.py writes of this module
(every upper-case name here).

model.json's MANIFEST_KEY names JSON_FILE, which holds JSON_FIELDS: the ids, the suppress lists, the language tokens
and, under "files", the binary files with their sizes. Every binary is little-endian:

    TOKEN_BYTES_FILE         the magic TOKEN_BYTES_MAGIC (4 ASCII bytes), then uint32 version, token count n and
                             byte count b (TOKEN_BYTES_HEADER bytes in all); uint32 offsets[n + 1] (offsets[0] = 0,
                             offsets[n] = b, never decreasing); the b bytes. Token i is bytes[offsets[i]:offsets[i+1]].
    TOKEN_EMBEDDING_FILE     EMBEDDING_DTYPE [n_vocab, n_text_state], row-major, no header
    POSITIONAL_EMBEDDING_FILE EMBEDDING_DTYPE [n_text_ctx, n_text_state], row-major, no header

Stdlib only: it ships to the board with the runner.
"""

FORMAT = "whisperkv-native-tables"
VERSION = 1                   # a runner refuses tables of another version, with the command to export again
FIX = "export the bundle again with `whisperkv export --out DIR`"   # what a refusal of the tables says to do
MANIFEST_KEY = "native_tables"
JSON_FILE = "native_tables.json"
TOKEN_BYTES_FILE = "native_token_bytes.bin"
TOKEN_EMBEDDING_FILE = "native_token_embedding.f16"
POSITIONAL_EMBEDDING_FILE = "native_positional_embedding.f16"
FILES = (JSON_FILE, TOKEN_BYTES_FILE, TOKEN_EMBEDDING_FILE, POSITIONAL_EMBEDDING_FILE)
JSON_FIELDS = ("format", "version", "dims", "special", "languages", "suppress", "timestamps", "files")
DIMS_FIELDS = ("n_vocab", "n_text_ctx", "n_text_state")
# core/model/tokenizer.py's SpecialTokens, field for field (a test holds the two equal)
SPECIAL_FIELDS = ("eot", "sot", "translate", "transcribe", "sot_lm", "sot_prev", "no_speech", "no_timestamps",
                  "timestamp_begin")
# "non_speech": always suppressed; "special_from": every id from it up is suppressed but the timestamps when the
# request samples them; "blank": suppressed at the first sampled step only
SUPPRESS_FIELDS = ("non_speech", "special_from", "blank")
# "precision": seconds per timestamp token; "max_initial": the first timestamp is at most timestamp_begin + this
TIMESTAMP_FIELDS = ("precision", "max_initial")
TOKEN_BYTES_MAGIC = "WKVB"
TOKEN_BYTES_HEADER = 16
EMBEDDING_DTYPE = "float16"
