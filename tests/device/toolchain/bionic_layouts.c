/* Checks device/toolchain/bionic/libc.h against Android's real libc (test_bionic_build.py runs it under qemu with
   ../shared/android-bionic): each line is a name and what bionic answered through the header's types and values. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct stat) == 128, "bionic's arm64 struct stat is 128 bytes");
_Static_assert(sizeof(pthread_mutex_t) == 40 && sizeof(pthread_cond_t) == 48, "bionic's LP64 pthread sizes");

static int named_probe(const struct dirent *d) { return strcmp(d->d_name, "probe") == 0; }

int main(int argc, char **argv) {
    struct stat st;
    struct utsname u;
    struct timespec ts;
    struct dirent **found = NULL;
    (void)argc;
    printf("stat_size %ld\n", stat(argv[1], &st) == 0 ? (long)st.st_size : -1L);
    printf("stat_is_reg %d\n", S_ISREG(st.st_mode));
    printf("open_missing_errno %d\n", open("/no/such/file", O_RDONLY) < 0 && errno == ENOENT);
    printf("page_size %ld\n", sysconf(_SC_PAGESIZE));
    printf("cores_positive %d\n", sysconf(_SC_NPROCESSORS_ONLN) > 0);
    printf("machine %s\n", uname(&u) == 0 ? u.machine : "?");
    printf("monotonic %d\n", clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
    int n = scandir(argv[2], &found, named_probe, NULL);
    printf("scandir %d %s\n", n, n == 1 ? found[0]->d_name : "-");
    fprintf(stderr, "stderr works\n");
    return 0;
}
