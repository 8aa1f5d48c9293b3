/* neuron-check: a bundle's encoder on one mel, then one decoder step, on the Neuron runtime through neuron.c and
   slots.c, each output written raw (its rows unpadded, in the slot's element type) for a test to compare.

     neuron-check [--lib PATH] [--api v1|v2] BUNDLE OUTDIR mel=FILE [x=FILE self_k=FILE self_v=FILE mask=FILE]

   An input file holds the slot's elements in its element type, or in fp32 or fp16 for a float slot of the other
   (fp32 to fp16 rounded to nearest even, as NumPy's astype does). A step input that the encoder outputs under the
   same name (cross_k, cross_v) comes from the encoder's buffer. It writes OUTDIR/GRAPH.SLOT.{f16,f32,i8,i16,u8}
   and prints each slot's form. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neuron.h"
#include "slots.h"

#define LINE 8192

static const char *const EXT[] = {"", "f16", "f32", "i8", "i16", "u8"};

static uint16_t to_f16(float f) {
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

static float from_f16(uint16_t h) {
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

/* `rows` rows of `row` elements from `src` (pitch `sp`, type `st`) into `dst` (pitch `dp`, type `dt`). */
static int copy_rows(void *dst, enum wkv_elem dt, size_t dp, const void *src, enum wkv_elem st, size_t sp,
                     size_t rows, size_t row, size_t elem) {
    for (size_t r = 0; r < rows; r++) {
        if (dt == st) {
            memcpy((char *)dst + r * dp * elem, (const char *)src + r * sp * elem, row * elem);
        } else if (dt == WKV_ELEM_F16 && st == WKV_ELEM_F32) {
            uint16_t *d = (uint16_t *)dst + r * dp;
            const float *s = (const float *)src + r * sp;
            for (size_t c = 0; c < row; c++) d[c] = to_f16(s[c]);
        } else if (dt == WKV_ELEM_F32 && st == WKV_ELEM_F16) {
            float *d = (float *)dst + r * dp;
            const uint16_t *s = (const uint16_t *)src + r * sp;
            for (size_t c = 0; c < row; c++) d[c] = from_f16(s[c]);
        } else {
            return -1;
        }
    }
    return 0;
}

static int fail(const char *line) {
    fprintf(stderr, "%s\n", line);
    return 1;
}

static const char *file_for(int argc, char **argv, const char *name) {
    size_t k = strlen(name);
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], name, k) == 0 && argv[i][k] == '=') return argv[i] + k + 1;
    return NULL;
}

static int fill_from_file(const wkv_slot *s, void *buf, const char *path, char *err) {
    FILE *f = fopen(path, "rb");
    size_t elements = wkv_slot_elements(s), len = 0;
    void *data = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = (size_t)ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc(len)) != NULL && fread(data, 1, len, f) != len)
        len = 0;
    if (f) fclose(f);
    enum wkv_elem from = len == elements * s->elem_bytes ? s->native
                         : len == elements * 4 ? WKV_ELEM_F32 : len == elements * 2 ? WKV_ELEM_F16 : WKV_ELEM_NONE;
    int rc = from == WKV_ELEM_NONE ||
             copy_rows(buf, s->native, s->pitch, data, from, s->row, s->rows, s->row, s->elem_bytes);
    if (rc)
        snprintf(err, LINE, "%s: %zu bytes, not %zu elements of %s (or fp32, fp16) for the slot %s", path, len,
                 elements, EXT[s->native], s->name);
    free(data);
    return rc ? -1 : 0;
}

static int write_output(const char *dir, const char *role, const wkv_slot *s, const void *buf, char *err) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.%s.%s", dir, role, s->name, EXT[s->native]);
    FILE *f = fopen(path, "wb");
    int ok = f != NULL;
    for (size_t r = 0; ok && r < s->rows; r++)
        ok = fwrite((const char *)buf + r * s->pitch * s->elem_bytes, s->elem_bytes, s->row, f) == s->row;
    if (f && fclose(f)) ok = 0;
    if (!ok) snprintf(err, LINE, "cannot write %s", path);
    return ok ? 0 : -1;
}

typedef struct {
    wkv_graph_slots *slots;
    wkv_neuron_graph g;
    void *in[WKV_GRAPH_SLOTS], *out[WKV_GRAPH_SLOTS];
    size_t in_len[WKV_GRAPH_SLOTS], out_len[WKV_GRAPH_SLOTS];
} graph;

static int open_graph(graph *gr, const char *bundle, const wkv_neuron_lib *lib, char *err) {
    char dla[2048];
    snprintf(dla, sizeof dla, "%s/%s", bundle, gr->slots->file);
    wkv_neuron_graph *g = &gr->g;
    if (wkv_neuron_graph_open(g, lib, dla, 1, err, LINE)) return -1;
    if (wkv_slots_derive(gr->slots, 1, g->in_size, g->n_in, g->has_in_padded ? g->in_padded : NULL, lib->suppressed,
                         err, LINE) ||
        wkv_slots_derive(gr->slots, 0, g->out_size, g->n_out, g->has_out_padded ? g->out_padded : NULL,
                         lib->suppressed, err, LINE))
        return -1;
    g->in_names = gr->slots->in_names;
    g->out_names = gr->slots->out_names;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < (k ? gr->slots->n_out : gr->slots->n_in); i++) {
            wkv_slot *s = k ? &gr->slots->out[i] : &gr->slots->in[i];
            size_t bytes = wkv_slot_bytes(s);
            (k ? gr->out_len : gr->in_len)[i] = bytes;
            if (!((k ? gr->out : gr->in)[i] = calloc(bytes ? bytes : 1, 1))) return -1;
            printf("%s %s %s size=%zu padded=%zu element=%s row=%zu pitch=%zu\n", gr->slots->role,
                   k ? "output" : "input", s->name, s->size, s->has_padded ? s->padded : 0, EXT[s->native], s->row,
                   s->pitch);
        }
    return 0;
}

/* Each input: from the graph `from`'s output of the same name, else from its NAME=FILE argument. */
static int feed(graph *gr, const graph *from, int argc, char **argv, char *err) {
    for (int i = 0; i < gr->slots->n_in; i++) {
        const wkv_slot *s = &gr->slots->in[i];
        for (int o = 0; from && o < from->slots->n_out; o++) {
            const wkv_slot *src = &from->slots->out[o];
            if (strcmp(src->name, s->name) != 0) continue;
            if (wkv_slot_elements(src) != wkv_slot_elements(s) || src->row != s->row ||
                copy_rows(gr->in[i], s->native, s->pitch, from->out[o], src->native, src->pitch, s->rows, s->row,
                          s->elem_bytes)) {
                snprintf(err, LINE, "the %s output %s does not fit the %s input", from->slots->role, s->name,
                         gr->slots->role);
                return -1;
            }
            goto fed;
        }
        const char *path = file_for(argc, argv, s->name);
        if (!path) {
            snprintf(err, LINE, "no file for the %s input %s: pass %s=FILE", gr->slots->role, s->name, s->name);
            return -1;
        }
        if (fill_from_file(s, gr->in[i], path, err)) return -1;
    fed:;
    }
    return 0;
}

static int run_graph(graph *gr, const graph *from, const char *out_dir, int argc, char **argv, char *err) {
    if (feed(gr, from, argc, argv, err) ||
        wkv_neuron_run(&gr->g, gr->in, gr->in_len, gr->out, gr->out_len, err, LINE))
        return -1;
    for (int o = 0; o < gr->slots->n_out; o++)
        if (write_output(out_dir, gr->slots->role, &gr->slots->out[o], gr->out[o], err)) return -1;
    return 0;
}

int main(int argc, char **argv) {
    const char *lib_path = NULL, *api = NULL;
    int a = 1;
    for (; a + 1 < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
        if (strcmp(argv[a], "--lib") == 0) lib_path = argv[a + 1];
        else if (strcmp(argv[a], "--api") == 0) api = argv[a + 1];
        else break;
    }
    if (argc - a < 3)
        return fail("usage: neuron-check [--lib PATH] [--api v1|v2] BUNDLE OUTDIR mel=FILE [NAME=FILE...]");
    const char *bundle = argv[a], *out_dir = argv[a + 1];
    static char err[LINE];
    static wkv_contract contract;
    static graph graphs[2];
    wkv_neuron_lib lib;
    if (wkv_contract_read(&contract, bundle, err, sizeof err)) return fail(err);
    if (wkv_neuron_open(&lib, lib_path, api, err, sizeof err)) return fail(err);
    char version[32] = "none";
    wkv_neuron_version(&lib, version, sizeof version);
    printf("library %s version %s api %s io %s\n", lib.path, version, lib.v1 ? "V1" : "V2",
           lib.suppressed ? "native" : "converted");
    static const char *const roles[] = {"encoder", "decoder_step"};
    int rc = 0;
    for (int r = 0; r < 2 && !rc; r++) {
        graphs[r].slots = wkv_contract_graph(&contract, roles[r]);
        rc = open_graph(&graphs[r], bundle, &lib, err);
        if (!rc) rc = run_graph(&graphs[r], r ? &graphs[0] : NULL, out_dir, argc - a - 2, argv + a + 2, err);
        if (!rc) printf("%s ran qos %s\n", roles[r], graphs[r].g.qos);
    }
    for (int r = 0; r < 2; r++) {
        wkv_neuron_graph_release(&graphs[r].g);
        for (int i = 0; i < WKV_GRAPH_SLOTS; i++) free(graphs[r].in[i]), free(graphs[r].out[i]);
    }
    wkv_neuron_close(&lib);
    return rc ? fail(err) : 0;
}
