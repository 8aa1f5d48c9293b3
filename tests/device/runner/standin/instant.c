/* The STAND-IN runtime's INSTANT build (neuron_runtime.c includes this file under -DINSTANT): no Python. Each
 * create reads the slots (shape, type) from the TFLite graph a stand-in .dla holds, with neuron_compute.py's rules
 * for sizes, padding and accepted buffers; each run checks its buffers' sizes and returns at once, its outputs left
 * as they are. So a runner's own work per step can be timed apart from any computing. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RUNTIMES 64
#define MAX_DIMS 8
#define ALIGN 16                      /* elements: the MDLA's width alignment (neuron_compute.ALIGN) */
typedef struct { long dims[MAX_DIMS]; int ndim; int type; } Slot;
typedef struct { Slot* slots[2]; long n[2]; int suppressed[2], pad[2]; } Instant;   /* [0] inputs, [1] outputs */
static Instant* instant_rts[MAX_RUNTIMES];

/* A flatbuffer read in place: a table's field, a vector's length and elements (TFLite's schema.fbs). */
typedef struct { const uint8_t* base; size_t size; } Fb;
static uint32_t u32(Fb f, size_t at) { uint32_t v = 0; if (at + 4 <= f.size) memcpy(&v, f.base + at, 4); return v; }
static long field(Fb f, size_t table, int id) {          /* the field's offset in the file, or -1 when absent */
    size_t vt = table - (size_t)(int32_t)u32(f, table);
    uint16_t vt_size = 0, off = 0;
    if (vt + 4 > f.size) return -1;
    memcpy(&vt_size, f.base + vt, 2);
    if ((size_t)(4 + 2 * id) + 2 > vt_size || vt + 4 + 2 * id + 2 > f.size) return -1;
    memcpy(&off, f.base + vt + 4 + 2 * id, 2);
    return off ? (long)(table + off) : -1;
}
static long ref(Fb f, size_t table, int id) {            /* a field holding an offset (table, vector) */
    long at = field(f, table, id);
    return at < 0 ? -1 : at + (long)u32(f, (size_t)at);
}
static long element(Fb f, long vec, uint32_t i) { return vec + 4 + 4 * (long)i; }

static int item_size(int type, int native_fp16) {
    static const int sizes[] = {4, 2, 4, 1, 8, 0, 1, 2, 8, 1, 8, 16, 8, 0, 0, 4, 2, 1, 2};   /* TensorType 0..18 */
    int is_float = type == 0 || type == 1 || type == 10;
    if (native_fp16 && is_float) return 2;
    return type >= 0 && type < (int)(sizeof sizes / sizeof sizes[0]) ? sizes[type] : 0;
}

static int read_slots(Fb f, long subgraph, long tensors, int kind, Instant* r) {
    long vec = ref(f, (size_t)subgraph, kind == 0 ? 1 : 2);     /* SubGraph: tensors 0, inputs 1, outputs 2 */
    if (vec < 0 || tensors < 0) return -1;
    r->n[kind] = (long)u32(f, (size_t)vec);
    r->slots[kind] = calloc(r->n[kind] > 0 ? (size_t)r->n[kind] : 1, sizeof(Slot));
    for (long i = 0; i < r->n[kind]; i++) {
        uint32_t t = u32(f, (size_t)element(f, vec, (uint32_t)i));
        if (t >= u32(f, (size_t)tensors)) return -1;
        long at = element(f, tensors, t), tensor = at + (long)u32(f, (size_t)at);
        long shape = ref(f, (size_t)tensor, 0), type = field(f, (size_t)tensor, 1);
        Slot* s = &r->slots[kind][i];
        s->type = type < 0 ? 0 : f.base[type];                  /* Tensor: shape 0, type 1 (FLOAT32 when absent) */
        s->ndim = shape < 0 ? 0 : (int)u32(f, (size_t)shape);
        if (s->ndim > MAX_DIMS) return -1;
        for (int d = 0; d < s->ndim; d++) s->dims[d] = (int32_t)u32(f, (size_t)element(f, shape, (uint32_t)d));
    }
    return 0;
}

static void free_instant(Instant* r) {
    if (r == NULL) return;
    free(r->slots[0]);
    free(r->slots[1]);
    free(r);
}

static long instant_create(const CreateArgs* c) {
    static const char magic[] = "STAND-IN DLA of ";
    int fd = open(c->path, O_RDONLY);
    struct stat st;
    if (fd < 0) return -1;
    if (fstat(fd, &st) != 0 || st.st_size < 16) { close(fd); return -1; }
    uint8_t* map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);   /* only the graph's index is read */
    close(fd);
    if (map == MAP_FAILED) return -1;
    size_t skip = memcmp(map, magic, sizeof magic - 1) == 0 ? sizeof magic - 1 : 0;
    Fb f = {map + skip, (size_t)st.st_size - skip};
    Instant* r = calloc(1, sizeof(Instant));
    long slot = -1;
    if (f.size >= 8 && memcmp(f.base + 4, "TFL3", 4) == 0) {
        long subgraphs = ref(f, u32(f, 0), 2);                 /* Model: subgraphs 2 */
        long sg = subgraphs < 0 || u32(f, (size_t)subgraphs) == 0 ? -1
                  : element(f, subgraphs, 0) + (long)u32(f, (size_t)element(f, subgraphs, 0));
        if (sg >= 0 && read_slots(f, sg, ref(f, (size_t)sg, 0), 0, r) == 0
            && read_slots(f, sg, ref(f, (size_t)sg, 0), 1, r) == 0)
            for (long i = 0; i < MAX_RUNTIMES && slot < 0; i++) if (instant_rts[i] == NULL) slot = i;
    }
    munmap(map, (size_t)st.st_size);
    if (slot < 0) { free_instant(r); return -1; }
    r->suppressed[0] = c->suppress_in;
    r->suppressed[1] = c->suppress_out;
    r->pad[0] = PAD >= 1;
    r->pad[1] = PAD >= 2;
    instant_rts[slot] = r;
    return slot + 1;
}

static Instant* instant_rt(long handle) {
    return handle >= 1 && handle <= MAX_RUNTIMES ? instant_rts[handle - 1] : NULL;
}

static long instant_size(long handle, const char* kind_name, long slot, int padded) {
    Instant* r = instant_rt(handle);
    int kind = strcmp(kind_name, "outputs") == 0;
    if (r == NULL) return -1;
    if (slot < 0) return r->n[kind];
    if (slot >= r->n[kind]) return -1;
    const Slot* s = &r->slots[kind][slot];
    long row = s->ndim ? s->dims[s->ndim - 1] : 1, elements = 1;
    for (int d = 0; d < s->ndim; d++) elements *= s->dims[d];
    long pitch = padded && r->pad[kind] ? (row + ALIGN - 1) / ALIGN * ALIGN : row;
    return row ? elements / row * pitch * item_size(s->type, r->suppressed[kind]) : 0;
}

static long expected(long handle, int kind, long slot) {
    Instant* r = instant_rt(handle);
    return instant_size(handle, kind ? "outputs" : "inputs", slot, r->suppressed[kind]);
}

static long instant_run(const RunArgs* a) {
    Instant* r = instant_rt(a->rt);
    if (r == NULL) return -1;
    for (long i = 0; i < a->n_in && i < r->n[0]; i++)
        if ((long)a->ins[i].length != expected(a->rt, 0, i)) return 3;      /* as the real runtime refuses it */
    for (long i = 0; i < a->n_out && i < r->n[1]; i++)
        if ((long)a->outs[i].length != expected(a->rt, 1, i)) return 3;
    return 0;
}

static long instant_call(const char* name, void* arg) {
    if (strcmp(name, "create") == 0) return instant_create(arg);
    if (strcmp(name, "run") == 0) return instant_run(arg);
    if (strcmp(name, "size") == 0) {
        SizeQuery* q = arg;
        return instant_size(q->rt, q->kind, q->slot, q->padded);
    }
    if (strcmp(name, "accepts") == 0) {
        AcceptArgs* a = arg;
        Instant* r = instant_rt(a->rt);
        int kind = strcmp(a->kind, "outputs") == 0;
        return r != NULL && a->slot < r->n[kind] && (long)a->length == expected(a->rt, kind, a->slot);
    }
    if (strcmp(name, "release") == 0) {
        long h = (long)(intptr_t)arg;
        free_instant(instant_rt(h));
        if (h >= 1 && h <= MAX_RUNTIMES) instant_rts[h - 1] = NULL;
        return 0;
    }
    return 0;                            /* qos: accepted, as by the computing build (which logs it for tests) */
}
