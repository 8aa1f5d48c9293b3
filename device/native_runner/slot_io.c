#include "slot_io.h"

#include <math.h>
#include <string.h>

#include "vector_clones.h"

uint16_t wkv_f16_from_f32(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu, e = ax >> 23;
    if (ax >= 0x7f800000u) return sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0);
    if (ax >= 0x477ff000u) return sign | 0x7c00;
    if (e < 113) {
        if (e < 102) return sign;
        uint32_t m = (ax & 0x7fffff) | 0x800000, s = 126 - e, q = m >> s;
        uint32_t rem = m & ((1u << s) - 1), half = 1u << (s - 1);
        return sign | (uint16_t)(q + (rem > half || (rem == half && (q & 1))));
    }
    uint32_t h = ((e - 112) << 10) | ((ax >> 13) & 0x3ff), rem = ax & 0x1fff;
    return sign | (uint16_t)(h + (rem > 0x1000 || (rem == 0x1000 && (h & 1))));
}

float wkv_f32_from_f16(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
    if (e == 31) x = sign | 0x7f800000u | (m << 13);
    else if (e) x = sign | ((e + 112) << 23) | (m << 13);
    else if (!m) x = sign;
    else {
        e = 113;
        while (!(m & 0x400)) m <<= 1, e--;
        x = sign | (e << 23) | ((m & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* to_slot: rint(value / scale) + zero_point, saturated (the mask's -1e9 too) */
static long quantize(const wkv_slot *s, float v, long lo, long hi) {
    float q = nearbyintf(v / (float)s->scale) + (float)s->zero_point;
    return q <= (float)lo ? lo : q >= (float)hi ? hi : (long)q;
}

static void put_value(const wkv_slot *s, void *row, size_t c, float v) {
    switch (s->native) {
    case WKV_ELEM_F16: ((uint16_t *)row)[c] = wkv_f16_from_f32(v); break;
    case WKV_ELEM_F32: ((float *)row)[c] = v; break;
    case WKV_ELEM_I8: ((int8_t *)row)[c] = (int8_t)quantize(s, v, INT8_MIN, INT8_MAX); break;
    case WKV_ELEM_I16: ((int16_t *)row)[c] = (int16_t)quantize(s, v, INT16_MIN, INT16_MAX); break;
    case WKV_ELEM_U8: ((uint8_t *)row)[c] = (uint8_t)quantize(s, v, 0, UINT8_MAX); break;
    default: break;
    }
}

static float get_value(const wkv_slot *s, const void *row, size_t c) {
    float q;
    switch (s->native) {
    case WKV_ELEM_F16: return wkv_f32_from_f16(((const uint16_t *)row)[c]);
    case WKV_ELEM_F32: return ((const float *)row)[c];
    case WKV_ELEM_I8: q = (float)((const int8_t *)row)[c]; break;
    case WKV_ELEM_I16: q = (float)((const int16_t *)row)[c]; break;
    case WKV_ELEM_U8: q = (float)((const uint8_t *)row)[c]; break;
    default: return 0.0f;
    }
    return (q - (float)s->zero_point) * (float)s->scale;     /* from_slot */
}

static char *row_of(const wkv_slot *s, const void *buf, size_t r) {
    return (char *)buf + r * s->pitch * s->elem_bytes;
}

void wkv_slot_put(const wkv_slot *s, void *buf, size_t first, const float *src, size_t rows, size_t src_pitch) {
    for (size_t r = 0; r < rows; r++) {
        char *row = row_of(s, buf, first + r);
        const float *from = src + r * src_pitch;
        if (s->native == WKV_ELEM_F32 && !s->has_scale) memcpy(row, from, s->row * 4);
        else
            for (size_t c = 0; c < s->row; c++) put_value(s, row, c, from[c]);
    }
}

/* A row of fp16 as fp32 without a branch, so that the compiler vectorizes it (the logits' 51865 values a step):
   the half's bits moved into a float32's places and scaled by 2^112 (exact, subnormals too), the sign put back,
   and an infinity or NaN given float32's all-ones exponent. */
VECTOR_CLONES static void f16_row(const uint16_t *src, float *dst, size_t n) {
    for (size_t c = 0; c < n; c++) {
        uint32_t h = src[c], em = h & 0x7fffu, u;
        float f;
        u = em << 13;
        memcpy(&f, &u, 4);
        f *= 0x1p112f;
        memcpy(&u, &f, 4);
        u |= ((h & 0x8000u) << 16) | (-(uint32_t)(em >= 0x7c00u) & 0x7f800000u);
        memcpy(&dst[c], &u, 4);
    }
}

void wkv_slot_get(const wkv_slot *s, const void *buf, size_t first, float *dst, size_t rows, size_t dst_pitch) {
    for (size_t r = 0; r < rows; r++) {
        const char *row = row_of(s, buf, first + r);
        if (s->native == WKV_ELEM_F16 && !s->has_scale) f16_row((const uint16_t *)row, dst + r * dst_pitch, s->row);
        else
            for (size_t c = 0; c < s->row; c++) dst[r * dst_pitch + c] = get_value(s, row, c);
    }
}

void wkv_slot_copy(const wkv_slot *dst, void *dbuf, size_t dfirst, const wkv_slot *src, const void *sbuf,
                   size_t sfirst, size_t rows) {
    int as_is = dst->native == src->native && !dst->has_scale && !src->has_scale;
    for (size_t r = 0; r < rows; r++) {
        char *to = row_of(dst, dbuf, dfirst + r);
        const char *from = row_of(src, sbuf, sfirst + r);
        if (as_is) memcpy(to, from, dst->row * dst->elem_bytes);
        else
            for (size_t c = 0; c < dst->row; c++) put_value(dst, to, c, get_value(src, from, c));
    }
}

void wkv_slot_zero(const wkv_slot *s, void *buf, size_t first, size_t rows) {
    for (size_t r = 0; r < rows; r++) {
        char *row = row_of(s, buf, first + r);
        if (!s->has_scale) memset(row, 0, s->row * s->elem_bytes);
        else
            for (size_t c = 0; c < s->row; c++) put_value(s, row, c, 0.0f);
    }
}

void wkv_slot_set(const wkv_slot *s, void *buf, size_t i, float value) {
    put_value(s, row_of(s, buf, i / s->row), i % s->row, value);
}

float wkv_slot_value(const wkv_slot *s, const void *buf, size_t i) {
    return get_value(s, row_of(s, buf, i / s->row), i % s->row);
}
