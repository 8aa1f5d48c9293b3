#define _POSIX_C_SOURCE 200809L

#include "soc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "whisperkv_spec.h"

#define TEXT 4096

static const char *const NAMES[] = WKV_SOC_NAMES, *const NPUS[] = WKV_SOC_NPUS, *const FLAGS[] = WKV_SOC_FLAGS;
static const int FAMILY[] = WKV_SOC_FAMILY;

/* soc.py _read: the file's first 4 KiB, NULs as spaces, stripped */
static void read_source(const char *path, char *text) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(text, 1, TEXT - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (!text[i]) text[i] = ' ';
    while (n && isspace((unsigned char)text[n - 1])) text[--n] = 0;
    size_t lead = strspn(text, " \t\r\n\v\f");
    memmove(text, text + lead, n - lead + 1);
}

static int on_path(const char *exe) {
    const char *path = getenv("PATH");
    char dir[4096], full[4200];
    while (path && *path) {
        size_t k = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)k, path);
        snprintf(full, sizeof full, "%s/%s", *dir ? dir : ".", exe);
        if (access(full, X_OK) == 0) return 1;
        path += k + (path[k] == ':');
    }
    return 0;
}

static void getprop(const char *name, char *text) {
    char cmd[128];
    text[0] = 0;
    snprintf(cmd, sizeof cmd, "getprop %s </dev/null 2>/dev/null", name);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(text, 1, TEXT - 1, p) : 0;
    if (p) pclose(p);
    text[n] = 0;
    while (n && isspace((unsigned char)text[n - 1])) text[--n] = 0;
}

/* soc_names: each "mt" and four digits not after a letter or digit, upper-cased, in order; -1 when none is left */
static int next_name(const char *text, size_t *at, char name[7]) {
    for (size_t i = *at; text[i]; i++) {
        const char *t = text + i;
        if (tolower((unsigned char)t[0]) != 'm' || tolower((unsigned char)t[1]) != 't') continue;
        if (i && (isdigit((unsigned char)t[-1]) || islower(tolower((unsigned char)t[-1])))) continue;
        if (!isdigit((unsigned char)t[2]) || !isdigit((unsigned char)t[3]) || !isdigit((unsigned char)t[4]) ||
            !isdigit((unsigned char)t[5]))
            continue;
        snprintf(name, 7, "MT%.4s", t + 2);
        *at = i + 6;
        return 0;
    }
    return -1;
}

static int known(const char *name) {
    for (int i = 0; i < WKV_SOC_NAMES_COUNT; i++)
        if (!strcmp(name, NAMES[i])) return i;
    return -1;
}

static void describe(wkv_out *o, const char *name, const char *read_from, const char *raw) {
    int row = name ? known(name) : -1;
    wkv_field_str(o, "name", name ? name : WKV_SOC_UNKNOWN);
    wkv_field_str(o, "npu", row >= 0 ? NPUS[row] : WKV_SOC_UNKNOWN);
    wkv_out flags = {0};
    wkv_out_raw(&flags, "[", 1);
    for (const char *f = row >= 0 ? FLAGS[row] : ""; *f;) {
        size_t k = strcspn(f, " ");
        if (flags.len > 1) wkv_out_raw(&flags, ",", 1);
        wkv_out_str(&flags, f, k);
        f += k + (f[k] == ' ');
    }
    wkv_out_raw(&flags, "]", 1);
    wkv_field_raw(o, "flags", flags.buf);
    wkv_out_free(&flags);
    if (read_from) wkv_field_str(o, "read_from", read_from);
    else wkv_field_raw(o, "read_from", "null");
    char cut[201];
    snprintf(cut, sizeof cut, "%s", raw);
    wkv_field_str(o, "raw", cut);
    wkv_object_end(o);
}

#define N_SOURCES (WKV_SOC_COMPATIBLE_COUNT + WKV_SOC_SOC0_COUNT + WKV_SOC_GETPROP_COUNT)

void wkv_board_soc(wkv_out *o) {
    static const char *const compatible[] = WKV_SOC_COMPATIBLE, *const soc0[] = WKV_SOC_SOC0,
                             *const props[] = WKV_SOC_GETPROP;
    static char text[N_SOURCES][TEXT], where[N_SOURCES][128];
    const char *root = getenv(WKV_SOC_ROOT_VARIABLE);
    size_t root_len = root && *root ? strlen(root) : 0;
    while (root_len && root[root_len - 1] == '/') root_len--;
    int n = 0, any = 0;
    for (int i = 0; i < WKV_SOC_COMPATIBLE_COUNT + WKV_SOC_SOC0_COUNT; i++, n++) {
        const char *file = i < WKV_SOC_COMPATIBLE_COUNT ? compatible[i] : soc0[i - WKV_SOC_COMPATIBLE_COUNT];
        char path[4400];
        snprintf(path, sizeof path, "%.*s%s", (int)root_len, root ? root : "", file);
        read_source(path, text[n]);
        snprintf(where[n], sizeof where[n], "%s", file);
        any |= text[n][0] != 0;
    }
    for (int i = 0; !any && i < WKV_SOC_GETPROP_COUNT && on_path("getprop"); i++, n++) {
        getprop(props[i], text[n]);
        snprintf(where[n], sizeof where[n], "getprop %s", props[i]);
    }
    int first = -1;
    char name[7], first_name[7] = "";
    for (int family = 0; family <= 1; family++)      /* a member's row first, a family's only where none is named */
        for (int i = 0; i < n; i++)
            for (size_t at = 0; !next_name(text[i], &at, name);) {
                int row = known(name);
                if (row >= 0 && FAMILY[row] == family) {
                    describe(o, name, where[i], text[i]);
                    return;
                }
                if (first < 0) first = i, memcpy(first_name, name, sizeof name);
            }
    if (first >= 0) describe(o, first_name, where[first], text[first]);
    else describe(o, NULL, NULL, "");
}

const char *wkv_board_os(void) {
#ifdef __ANDROID__
    static char os[TEXT + 16];
    char release[TEXT] = "";
    if (on_path("getprop")) getprop("ro.build.version.release", release);
    snprintf(os, sizeof os, "Android%s%s", *release ? " " : "", release);
    return os;
#else
    return "Linux";
#endif
}
