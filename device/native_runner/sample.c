#define _DEFAULT_SOURCE

#include "sample.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THERMAL "/sys/class/thermal"
#define MAX_ZONES 64

static int read_line(const char *path, char *out, size_t n) {
    FILE *f = fopen(path, "r");
    int ok = f && fgets(out, (int)n, f);
    if (f) fclose(f);
    if (ok) out[strcspn(out, "\n")] = 0;
    return ok;
}

/* millidegrees as degrees, to one decimal; 0 when the file is missing or no integer */
static int millideg(const char *path, double *out) {
    char line[64], *end;
    if (!read_line(path, line, sizeof line)) return 0;
    long v = strtol(line, &end, 10);
    if (end == line || *end) return 0;
    *out = round(v / 100.0) / 10.0;
    return 1;
}

static int zone_number(const struct dirent *d) {
    return strncmp(d->d_name, "thermal_zone", 12) ? -1 : atoi(d->d_name + 12);
}

static int by_number(const struct dirent **a, const struct dirent **b) {
    return zone_number(*a) - zone_number(*b);
}

static int is_zone(const struct dirent *d) { return zone_number(d) >= 0; }

/* the zones, as an array into `o`; whether one is throttling */
static int zones(wkv_out *o) {
    struct dirent **found = NULL;
    int n = scandir(THERMAL, &found, is_zone, by_number), throttling = 0, written = 0;
    wkv_out_raw(o, ",\"zones\":[", 10);
    for (int i = 0; i < n; i++) {
        char path[512], type[128] = "";
        double temp, passive = INFINITY, trip;
        snprintf(path, sizeof path, THERMAL "/%s/temp", found[i]->d_name);
        if (!millideg(path, &temp)) continue;
        snprintf(path, sizeof path, THERMAL "/%s/type", found[i]->d_name);
        read_line(path, type, sizeof type);
        for (int t = 0; t < 32; t++) {
            char kind[32];
            snprintf(path, sizeof path, THERMAL "/%s/trip_point_%d_type", found[i]->d_name, t);
            if (!read_line(path, kind, sizeof kind) || strcmp(kind, "passive")) continue;
            snprintf(path, sizeof path, THERMAL "/%s/trip_point_%d_temp", found[i]->d_name, t);
            if (millideg(path, &trip) && trip < passive) passive = trip;
        }
        wkv_out z = {0};
        wkv_field_str(&z, "zone", found[i]->d_name);
        wkv_field_str(&z, "type", type);
        wkv_field_num(&z, "temp_c", temp);
        wkv_field_num(&z, "passive_c", passive);      /* null when it has none */
        wkv_object_end(&z);
        if (written++) wkv_out_raw(o, ",", 1);
        wkv_out_raw(o, z.buf, z.len);
        wkv_out_free(&z);
        throttling |= isfinite(passive) && temp >= passive;
    }
    for (int i = 0; i < n; i++) free(found[i]);
    free(found);
    wkv_out_raw(o, "]", 1);
    return throttling;
}

static double rss_mb(void) {
    char line[128];
    long pages_total, pages;
    if (!read_line("/proc/self/statm", line, sizeof line) || sscanf(line, "%ld %ld", &pages_total, &pages) != 2)
        return NAN;
    return round((double)pages * (double)sysconf(_SC_PAGESIZE) / 1048576.0 * 10) / 10;
}

static double mem_available_mb(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double mb = NAN;
    long kb;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %ld", &kb) == 1) mb = round(kb / 1024.0 * 10) / 10;
    if (f) fclose(f);
    return mb;
}

void wkv_emit_sample(wkv_out *o, double t_s) {
    struct timespec cpu;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    wkv_event_begin(o, "sample");
    wkv_field_num(o, "t_s", round(t_s * 1e3) / 1e3);
    wkv_field_num(o, "cpu_s", round(((double)cpu.tv_sec + cpu.tv_nsec / 1e9) * 1e3) / 1e3);
    wkv_field_num(o, "rss_mb", rss_mb());
    wkv_field_num(o, "mem_available_mb", mem_available_mb());
    wkv_field_bool(o, "throttling", zones(o));
}
