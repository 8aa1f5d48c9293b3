/* The STAND-IN runtime's WIRE build (neuron_runtime.c includes this file under -DWIRE): for a board without Python
 * (Android, built for bionic). Each create, size, QoS, run and release goes as one binary message over the unix
 * socket STANDIN_APU to the STAND-IN APU on the PC (apu_wire.py), which computes it with neuron_compute.py, as the
 * APU, a processor apart, computes for the real runtime. A message is one tagged value: 'i' int64, 's' and 'b' a
 * u32 length and bytes, 'l' a u32 count and values; a call is the list [name, env, args...], its answer an int, or
 * for a run the list [code, [outputs...]]. STANDIN_LOG names a file the board's stand-in logcat prints: the library
 * appends the lines the runtime logs there (tag NeuronRuntime), as MediaTek's library logs through liblog. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef STANDIN_LOG
#define STANDIN_LOG "/dev/standin-log"
#endif

static int wire_fd = -1, wire_broken;
static volatile char wire_busy;          /* one call at a time, as the GIL makes it on the Python builds */

static void wire_log(char level, const char* message) {
    char line[1400];
    struct timespec now = {0, 0};
    clock_gettime(CLOCK_REALTIME, &now);
    long t = (long)now.tv_sec, days = t / 86400, s = t % 86400;
    /* the civil date of `days` (H. Hinnant's algorithm), for logcat's MM-DD HH:MM:SS */
    long z = days + 719468, era = z / 146097, doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    int n = snprintf(line, sizeof line - 1, "%02ld-%02ld %02ld:%02ld:%02ld.%03ld %5d %5d %c NeuronRuntime: %s", m,
                     d, s / 3600, s / 60 % 60, s % 60, now.tv_nsec / 1000000, (int)getpid(), (int)getpid(), level,
                     message);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(STANDIN_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        (void)!write(fd, line, (size_t)n);
        close(fd);
    }
}

__attribute__((constructor)) static void wire_loaded(void) {
    wire_log('I', "STAND-IN Neuron runtime 0.0.1 loaded; its STAND-IN APU is at " STANDIN_APU);
}

typedef struct { char buf[4096]; size_t n; int ok; } Out;

static int write_all(const void* p, size_t n) {
    const char* c = p;
    while (n > 0) {
        long k = (long)send(wire_fd, c, n, MSG_NOSIGNAL);     /* a closed link is an error, not a SIGPIPE */
        if (k <= 0) return wire_broken = -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}
static int read_all(void* p, size_t n) {
    char* c = p;
    while (n > 0) {
        long k = (long)recv(wire_fd, c, n, 0);
        if (k <= 0) return wire_broken = -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static void flush_out(Out* o) {
    if (o->ok && o->n && write_all(o->buf, o->n) != 0) o->ok = 0;
    o->n = 0;
}
static void put(Out* o, const void* p, size_t n) {
    if (o->n + n > sizeof o->buf) flush_out(o);
    if (n > sizeof o->buf) {                 /* a buffer goes from the runner's memory as it is */
        if (o->ok && write_all(p, n) != 0) o->ok = 0;
        return;
    }
    memcpy(o->buf + o->n, p, n);
    o->n += n;
}
static void put_head(Out* o, char tag, uint32_t n) { put(o, &tag, 1); put(o, &n, 4); }
static void put_i(Out* o, long v) { int64_t x = v; put(o, "i", 1); put(o, &x, 8); }
static void put_b(Out* o, char tag, const void* p, size_t n) { put_head(o, tag, (uint32_t)n); put(o, p, n); }
static void put_s(Out* o, const char* s) { put_b(o, 's', s, strlen(s)); }

static int get_head(char tag, uint32_t* n) {
    char t = 0;
    return read_all(&t, 1) == 0 && t == tag && read_all(n, 4) == 0 ? 0 : (wire_broken = -1);
}
static long get_i(void) {
    char t = 0;
    int64_t v = -1;
    if (read_all(&t, 1) != 0 || t != 'i' || read_all(&v, 8) != 0) return wire_broken = -1;
    return (long)v;
}

/* A large input the same as the one last sent for its runtime and slot (the cross K/V through a window) goes as
 * 'h' (held) with no bytes: the APU keeps what each connection last sent, as a real APU keeps its input buffers. */
#define HELD_BYTES (1 << 20)
#define MAX_HELD 32
typedef struct { long rt, slot; void* copy; size_t n; } Held;
static Held held[MAX_HELD];

static void forget_held(void) {
    for (int i = 0; i < MAX_HELD; i++) free(held[i].copy);
    memset(held, 0, sizeof held);
}

static void put_input(Out* o, long rt, long slot, const void* p, size_t n) {
    Held* h = NULL;
    for (int i = 0; i < MAX_HELD && n >= HELD_BYTES && h == NULL; i++)
        if (held[i].copy != NULL && held[i].rt == rt && held[i].slot == slot) h = &held[i];
    for (int i = 0; i < MAX_HELD && n >= HELD_BYTES && h == NULL; i++)
        if (held[i].copy == NULL) h = &held[i];
    if (h != NULL && h->copy != NULL && h->n == n && memcmp(h->copy, p, n) == 0) return put_head(o, 'h', 0);
    if (h != NULL && (h->n == n || (h->copy = realloc(h->copy, n)) != NULL)) {
        *h = (Held){rt, slot, h->copy, n};
        memcpy(h->copy, p, n);
    } else if (h != NULL) {
        *h = (Held){0, 0, NULL, 0};
    }
    put_b(o, 'b', p, n);
}

/* The forwarded environment (apu.FORWARDED_ENV): the faults a test asks of the APU, the profiler's settings. */
static void put_env(Out* o) {
    static const char* const keys[] = {"STANDIN_NOISE", "STANDIN_SWAP", "STANDIN_REL_NOISE", "STANDIN_EOT_FROM",
                                       "MTKNN_ENABLE_PROFILER", "MTKNN_PROFILER_LOG_PATH"};
    char env[1024];
    size_t n = 0;
    env[0] = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char* v = getenv(keys[i]);
        if (v != NULL && n < sizeof env)
            n += (size_t)snprintf(env + n, sizeof env - n, "%s%s=%s", n ? "\n" : "", keys[i], v);
    }
    put_s(o, n < sizeof env ? env : "");
}

static int wire_connect(void) {
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    _Static_assert(sizeof STANDIN_APU <= sizeof a.sun_path, "STANDIN_APU is longer than a socket's path");
    memcpy(a.sun_path, STANDIN_APU, sizeof STANDIN_APU);
    wire_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    forget_held();                           /* a new connection's APU holds nothing yet */
    if (wire_fd >= 0 && connect(wire_fd, (struct sockaddr*)&a, sizeof a) == 0) return 0;
    if (wire_fd >= 0) close(wire_fd);
    wire_fd = -1;
    wire_log('E', "STAND-IN: the STAND-IN APU at " STANDIN_APU " does not answer");
    return -1;
}

/* A .dla's path as the runner's process resolves it: the APU has a working directory of its own. */
static const char* resolved(const char* path, char* full, size_t n) {
    char cwd[512];
    long k = path[0] == '/' ? -1 : (long)readlink("/proc/self/cwd", cwd, sizeof cwd - 1);
    if (k <= 0) return path;
    cwd[k] = 0;
    snprintf(full, n, "%s/%s", cwd, path);
    return full;
}

static void put_call(Out* o, const char* name, void* arg) {
    if (strcmp(name, "create") == 0) {
        CreateArgs* c = arg;
        char full[1024];
        put_head(o, 'l', 7), put_s(o, name), put_env(o), put_s(o, resolved(c->path, full, sizeof full));
        put_i(o, c->threads), put_i(o, c->suppress_in), put_i(o, c->suppress_out), put_i(o, PAD);
    } else if (strcmp(name, "size") == 0) {
        SizeQuery* q = arg;
        put_head(o, 'l', 6), put_s(o, name), put_env(o), put_i(o, q->rt), put_s(o, q->kind), put_i(o, q->slot);
        put_i(o, q->padded);
    } else if (strcmp(name, "accepts") == 0) {
        AcceptArgs* a = arg;
        put_head(o, 'l', 6), put_s(o, name), put_env(o), put_i(o, a->rt), put_s(o, a->kind), put_i(o, a->slot);
        put_i(o, (long)a->length);
    } else if (strcmp(name, "qos") == 0) {
        QoSArgs* s = arg;
        put_head(o, 'l', 7), put_s(o, name), put_env(o), put_i(o, s->rt), put_i(o, s->q->preference);
        put_i(o, s->q->priority), put_i(o, (long)s->q->boostValue), put_i(o, s->q->powerPolicy);
    } else if (strcmp(name, "run") == 0) {
        RunArgs* r = arg;
        put_head(o, 'l', 5), put_s(o, name), put_env(o), put_i(o, r->rt), put_head(o, 'l', (uint32_t)r->n_in);
        for (long i = 0; i < r->n_in; i++) put_input(o, r->rt, i, r->ins[i].buffer, r->ins[i].length);
        put_head(o, 'l', (uint32_t)r->n_out);
        for (long i = 0; i < r->n_out; i++) put_i(o, (long)r->outs[i].length);
    } else {                                 /* release */
        put_head(o, 'l', 3), put_s(o, name), put_env(o), put_i(o, (long)(intptr_t)arg);
    }
}

/* A run's answer: [code, [outputs]], each output copied into the runner's buffer. */
static long get_run(RunArgs* r) {
    uint32_t n = 0, m = 0;
    if (get_head('l', &n) != 0 || n != 2) return wire_broken = -1;
    long code = get_i();
    if (get_head('l', &m) != 0) return -1;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t len = 0;
        char skip[4096];
        if (get_head('b', &len) != 0) return -1;
        size_t keep = i < (uint32_t)r->n_out && r->outs[i].length < len ? r->outs[i].length : len;
        if (i < (uint32_t)r->n_out && read_all(r->outs[i].buffer, keep) != 0) return -1;
        for (size_t left = i < (uint32_t)r->n_out ? len - keep : len; left > 0;) {
            size_t k = left < sizeof skip ? left : sizeof skip;
            if (read_all(skip, k) != 0) return -1;
            left -= k;
        }
    }
    return code;
}

static long wire_call(const char* name, void* arg) {
    while (__atomic_test_and_set(&wire_busy, __ATOMIC_ACQUIRE)) {}
    long r = -1;
    Out* o = calloc(1, sizeof(Out));
    if (o != NULL && (wire_fd >= 0 || wire_connect() == 0)) {
        o->ok = 1;
        wire_broken = 0;
        put_call(o, name, arg);
        flush_out(o);
        r = o->ok ? (strcmp(name, "run") == 0 ? get_run(arg) : get_i()) : -1;
        if (!o->ok || wire_broken) {         /* the link is out of step: the next call connects anew */
            close(wire_fd);
            wire_fd = -1;
            wire_log('E', "STAND-IN: the link to the STAND-IN APU at " STANDIN_APU " broke");
        }
    }
    free(o);
    if (strcmp(name, "create") == 0) {
        char line[1200], full[1024];
        const char* path = resolved(((CreateArgs*)arg)->path, full, sizeof full);
        snprintf(line, sizeof line, r > 0 ? "STAND-IN: loaded the network %s as runtime %ld"
                                          : "STAND-IN: cannot load the network %s (%ld)", path, r);
        wire_log(r > 0 ? 'I' : 'E', line);
    }
    __atomic_clear(&wire_busy, __ATOMIC_RELEASE);
    return r;
}
