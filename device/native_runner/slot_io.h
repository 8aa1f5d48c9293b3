/* Values in and out of a slot's buffer (slots.h): fp32 to the slot's element and back, fp16 rounded to nearest
   even as NumPy's astype rounds, an integer slot through its one scale and zero point as
   device/runner/tflite/int_slots.py does; each row `pitch` elements apart. */
#ifndef WKV_SLOT_IO_H
#define WKV_SLOT_IO_H

#include <stddef.h>
#include <stdint.h>

#include "slots.h"

uint16_t wkv_f16_from_f32(float f);
float wkv_f32_from_f16(uint16_t h);

/* `rows` rows of the slot's row length from `src` (fp32, `src_pitch` apart) into the buffer from row `first`. */
void wkv_slot_put(const wkv_slot *s, void *buf, size_t first, const float *src, size_t rows, size_t src_pitch);
/* `rows` rows of the buffer from row `first` into `dst` (fp32, `dst_pitch` apart). */
void wkv_slot_get(const wkv_slot *s, const void *buf, size_t first, float *dst, size_t rows, size_t dst_pitch);
/* Rows of one slot's buffer into another's: as they are when both hold the same element without a scale (the fp16
   cache and cross state), else through fp32, as the Python backend reads one and fills the other. The row lengths
   must be equal. */
void wkv_slot_copy(const wkv_slot *dst, void *dbuf, size_t dfirst, const wkv_slot *src, const void *sbuf,
                   size_t sfirst, size_t rows);
/* The value at the flat position `i` of the slot's tensor, as fp32. */
float wkv_slot_value(const wkv_slot *s, const void *buf, size_t i);
/* One value written at the flat position `i` of the slot's tensor (its padding skipped). */
void wkv_slot_set(const wkv_slot *s, void *buf, size_t i, float value);
/* Rows first..first+rows-1 of the slot set to 0 (an integer slot's zero point). */
void wkv_slot_zero(const wkv_slot *s, void *buf, size_t first, size_t rows);

#endif
