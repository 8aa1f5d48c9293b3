import numpy as np
import pytest

from core.model.kv_cache import CacheFull, KVCache


def visible(mask):
    return np.flatnonzero(mask.reshape(-1) == 0.0).tolist()


@pytest.mark.parametrize("cache_len", [0, 3, 447])
def test_mask_shows_filled_slots_and_current_token(cache_len):
    cache = KVCache()
    cache.cache_len = cache_len
    m = cache.mask()
    assert m.shape == (1, 1, 1, 449)
    assert visible(m) == list(range(cache_len)) + [448]
    assert np.all(m.reshape(-1)[cache_len:448] == np.float32(-1e9))


def test_write_places_new_kv_at_cache_len_and_counts_bytes():
    cache = KVCache()
    for i in range(3):
        cache.write(np.full((6, 1, 1, 512), i + 1, np.float32), np.full((6, 1, 1, 512), -(i + 1), np.float32))
    assert cache.cache_len == 3
    assert cache.k[2, 0, 1, 0] == 2 and cache.v[5, 0, 2, 7] == -3 and cache.k[0, 0, 3, 0] == 0
    assert cache.bytes_per_token == 2 * 6 * 512 * 4
    assert cache.bytes_used == 3 * cache.bytes_per_token
    assert cache.bytes_total == 2 * 6 * 448 * 512 * 4


def test_full_cache_refuses_writes_and_reset_empties_it():
    cache = KVCache()
    one = np.ones((6, 1, 1, 512), np.float32)
    for _ in range(448):
        cache.write(one, one)
    assert cache.full and visible(cache.mask()) == list(range(449))
    with pytest.raises(CacheFull):
        cache.write(one, one)
    cache.reset()
    assert cache.cache_len == 0 and not cache.full and not cache.k.any()


def test_write_many_fills_slots_at_once_and_truncate_hides_them_again():
    cache = KVCache()
    cache.write(np.ones((6, 1, 1, 512), np.float32), np.ones((6, 1, 1, 512), np.float32))
    k = np.arange(6 * 4 * 512, dtype=np.float32).reshape(6, 1, 4, 512)
    cache.write_many(k, -k)
    assert cache.cache_len == 5 and np.array_equal(cache.k[:, :, 1:5], k) and np.array_equal(cache.v[:, :, 1:5], -k)
    assert visible(cache.mask()) == [0, 1, 2, 3, 4, 448]
    cache.truncate(2)
    assert cache.cache_len == 2 and visible(cache.mask()) == [0, 1, 448]
    cache.truncate(9)                                    # never grows
    assert cache.cache_len == 2
    with pytest.raises(CacheFull):
        cache.write_many(np.zeros((6, 1, 447, 512), np.float32), np.zeros((6, 1, 447, 512), np.float32))


def test_a_head_major_cache_holds_the_same_keys_and_values_per_head():
    """KVCache(n_head=8): [6, 8, 448, 64], each head's slots contiguous; the same writes, the same bytes."""
    stacked, heads = KVCache(), KVCache(n_head=8)
    rng = np.random.default_rng(0)
    one = rng.standard_normal((6, 1, 1, 512)).astype(np.float32)
    many = rng.standard_normal((6, 1, 5, 512)).astype(np.float32)
    for cache in (stacked, heads):
        cache.write(one, -one)
        cache.write_many(many, -many)
    assert heads.k.shape == (6, 8, 448, 64) and heads.k[0, 0].flags.c_contiguous
    for a, b in ((stacked.k, heads.k), (stacked.v, heads.v)):
        assert np.array_equal(a[:, 0].reshape(6, 448, 8, 64).transpose(0, 2, 1, 3), b)
    assert heads.bytes_per_token == stacked.bytes_per_token and heads.bytes_total == stacked.bytes_total
    assert np.array_equal(heads.mask(), stacked.mask())


def test_a_growing_cache_adds_slots_as_tokens_come_and_keeps_what_it_holds():
    """grow_by=64: 64 slots at first, 128 from the 65th token on, never past max_len; the mask follows."""
    fixed, growing = KVCache(n_head=8), KVCache(n_head=8, grow_by=64)
    assert growing.slots == 64 and growing.mask().shape == (1, 1, 1, 65)
    rng = np.random.default_rng(1)
    for t in range(70):
        new = rng.standard_normal((6, 1, 1, 512)).astype(np.float32)
        for cache in (fixed, growing):
            cache.write(new, -new)
        assert growing.slots == (64 if t < 64 else 128)
    assert np.array_equal(growing.k[:, :, :70], fixed.k[:, :, :70]) and np.array_equal(growing.v[:, :, :70], fixed.v[:, :, :70])
    assert visible(growing.mask()) == list(range(70)) + [128]
    growing.write_many(np.ones((6, 1, 100, 512), np.float32), np.ones((6, 1, 100, 512), np.float32))
    assert growing.slots == 192 and growing.cache_len == 170 and growing.k[:, :, 70:170].min() == 1
    growing.write_many(np.zeros((6, 1, 278, 512), np.float32), np.zeros((6, 1, 278, 512), np.float32))
    assert growing.slots == 448 and growing.full
    assert growing.bytes_total == fixed.bytes_total and growing.bytes_per_token == fixed.bytes_per_token
