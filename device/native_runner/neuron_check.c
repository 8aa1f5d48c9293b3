/* neuron-check: a bundle's encoder on one mel, then one decoder step, on the Neuron runtime through neuron.c and
   slots.c, each output written raw (its rows unpadded, in the slot's element type) for a test to compare.

     neuron-check [--lib PATH] [--api v1|v2] BUNDLE OUTDIR mel=FILE [x=FILE self_k=FILE self_v=FILE mask=FILE]

   An input file holds the slot's elements in its element type, or in fp32 or fp16 for a float slot of the other
   (fp32 to fp16 rounded to nearest even: slot_io.c). A step input that the encoder outputs under the
   same name (cross_k, cross_v) comes from the encoder's buffer. It writes OUTDIR/GRAPH.SLOT.{f16,f32,i8,i16,u8}
   and prints each slot's form. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "neuron.h"
#include "slot_io.h"
#include "slots.h"

#define LINE 8192

static const char *const EXT[] = {"", "f16", "f32", "i8", "i16", "u8"};

/* `rows` rows of `row` elements from `src` (pitch `sp`, type `st`) into `dst` (pitch `dp`, type `dt`). */
static int copy_rows(void *dst, enum wkv_elem dt, size_t dp, const void *src, enum wkv_elem st, size_t sp,
                     size_t rows, size_t row, size_t elem) {
    for (size_t r = 0; r < rows; r++) {
        if (dt == st) {
            memcpy((char *)dst + r * dp * elem, (const char *)src + r * sp * elem, row * elem);
        } else if (dt == WKV_ELEM_F16 && st == WKV_ELEM_F32) {
            uint16_t *d = (uint16_t *)dst + r * dp;
            const float *s = (const float *)src + r * sp;
            for (size_t c = 0; c < row; c++) d[c] = wkv_f16_from_f32(s[c]);
        } else if (dt == WKV_ELEM_F32 && st == WKV_ELEM_F16) {
            float *d = (float *)dst + r * dp;
            const uint16_t *s = (const uint16_t *)src + r * sp;
            for (size_t c = 0; c < row; c++) d[c] = wkv_f32_from_f16(s[c]);
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

static int open_graph(wkv_graph *gr, wkv_graph_slots *slots, const char *bundle, const wkv_neuron_lib *lib,
                      char *err) {
    if (wkv_graph_open(gr, slots, bundle, lib, 1, err, LINE)) return -1;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < (k ? slots->n_out : slots->n_in); i++) {
            const wkv_slot *s = k ? &slots->out[i] : &slots->in[i];
            printf("%s %s %s size=%zu padded=%zu element=%s row=%zu pitch=%zu\n", slots->role,
                   k ? "output" : "input", s->name, s->size, s->has_padded ? s->padded : 0, EXT[s->native], s->row,
                   s->pitch);
        }
    return 0;
}

/* Each input: from the graph `from`'s output of the same name, else from its NAME=FILE argument. */
static int feed(wkv_graph *gr, const wkv_graph *from, int argc, char **argv, char *err) {
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

static int run_graph(wkv_graph *gr, const wkv_graph *from, const char *out_dir, int argc, char **argv, char *err) {
    if (feed(gr, from, argc, argv, err) ||
        wkv_graph_run(gr, err, LINE))
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
    static wkv_graph graphs[2];
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
        rc = open_graph(&graphs[r], wkv_contract_graph(&contract, roles[r]), bundle, &lib, err);
        if (!rc) rc = run_graph(&graphs[r], r ? &graphs[0] : NULL, out_dir, argc - a - 2, argv + a + 2, err);
        if (!rc) printf("%s ran qos %s\n", roles[r], graphs[r].g.qos);
    }
    for (int r = 0; r < 2; r++) wkv_graph_close(&graphs[r]);
    wkv_neuron_close(&lib);
    return rc ? fail(err) : 0;
}
