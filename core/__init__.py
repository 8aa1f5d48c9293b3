"""Whisper base in MTK form: audio, log-mel, tokenizer, weights, NumPy model, KV cache, decoding.

Pure Python and NumPy. No Qt and no transport live here.
"""
