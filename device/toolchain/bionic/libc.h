/* The declarations of Android's C library (bionic, arm64, API 23) that the native runner and the stand-ins built
   with it use: every standard header name they include is staged as this one file (device/toolchain/bionic_build.py).
   Layouts and values are bionic's LP64 ones (AOSP bionic/libc/include, the kernel's asm-generic uapi), not glibc's;
   a function here must also be on symbols.txt, the list the stubs are made from and the lint checks against. */
#ifndef WKV_BIONIC_LIBC_H
#define WKV_BIONIC_LIBC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef long ssize_t;
typedef long off_t;
typedef long time_t;
typedef unsigned int mode_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef unsigned long dev_t;
typedef unsigned long ino_t;
typedef unsigned int nlink_t;
typedef int clockid_t;
typedef int pid_t;
typedef uint32_t socklen_t;
typedef unsigned short sa_family_t;

/* errno.h: bionic's errno is a call, glibc's __errno_location is not in bionic */
int *__errno(void);
#define errno (*__errno())
#define ENOENT 2
#define EINTR 4

/* stdio.h: API 23 exports stdin/stdout/stderr as pointers (before it they were &__sF[n]). gcc's builtins may turn
   a printf into puts, putchar or fwrite, so those stay declared and listed. */
typedef struct __sFILE FILE;
extern FILE *stdin;
extern FILE *stdout;
extern FILE *stderr;
#define EOF (-1)
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
FILE *fopen(const char *path, const char *mode);
int fclose(FILE *f);
int fflush(FILE *f);
size_t fread(void *buf, size_t size, size_t n, FILE *f);
size_t fwrite(const void *buf, size_t size, size_t n, FILE *f);
int fseek(FILE *f, long offset, int whence);
long ftell(FILE *f);
char *fgets(char *buf, int n, FILE *f);
int fputc(int c, FILE *f);
int fputs(const char *s, FILE *f);
int putchar(int c);
int putc(int c, FILE *f);
int puts(const char *s);
int printf(const char *fmt, ...);
int fprintf(FILE *f, const char *fmt, ...);
int sprintf(char *out, const char *fmt, ...);
int snprintf(char *out, size_t n, const char *fmt, ...);
int vsnprintf(char *out, size_t n, const char *fmt, va_list ap);
int sscanf(const char *s, const char *fmt, ...);
ssize_t getline(char **line, size_t *cap, FILE *f);
void perror(const char *s);
FILE *popen(const char *command, const char *mode);
int pclose(FILE *f);

/* stdlib.h */
void *malloc(size_t n);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t n);
void free(void *p);
void abort(void) __attribute__((noreturn));
char *getenv(const char *name);
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
double strtod(const char *s, char **end);
long strtol(const char *s, char **end, int base);
unsigned long long strtoull(const char *s, char **end, int base);
int atoi(const char *s);
long atol(const char *s);
double atof(const char *s);
int abs(int x);

/* string.h, strings.h */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
int strcasecmp(const char *a, const char *b);
char *strcpy(char *dst, const char *src);
char *strcat(char *dst, const char *src);
char *strncpy(char *dst, const char *src, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
char *strstr(const char *s, const char *sub);
size_t strspn(const char *s, const char *accept);
size_t strcspn(const char *s, const char *reject);
char *strdup(const char *s);
char *strerror(int e);
char *strtok_r(char *s, const char *sep, char **save);

/* ctype.h: real functions in bionic's libc (glibc's macros read __ctype_b_loc, which bionic lacks) */
int isdigit(int c);
int islower(int c);
int isspace(int c);
int tolower(int c);

/* math.h: the classifications as gcc's builtins, the functions from bionic's libm */
#define NAN (__builtin_nanf(""))
#define INFINITY (__builtin_inff())
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
double exp(double x);
float expf(float x);
double log(double x);
float logf(float x);
double round(double x);
double floor(double x);
float nearbyintf(float x);
double fmod(double x, double y);
long lround(double x);
float ldexpf(float x, int e);

/* time.h */
struct timespec { time_t tv_sec; long tv_nsec; };
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
int clock_gettime(clockid_t clock, struct timespec *ts);

/* unistd.h, fcntl.h (arm64: asm-generic's O_ values but its own O_DIRECTORY/O_NOFOLLOW) */
#define F_OK 0
#define X_OK 1
#define R_OK 4
#define O_RDONLY 0
#define O_WRONLY 01
#define O_RDWR 02
#define O_CREAT 0100
#define O_EXCL 0200
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_NONBLOCK 04000
#define O_DIRECTORY 040000
#define O_CLOEXEC 02000000
/* bionic's own sysconf numbering (bionic/libc/include/bits/sysconf.h), not glibc's */
#define _SC_PAGESIZE 0x0027
#define _SC_NPROCESSORS_ONLN 0x0061
int open(const char *path, int flags, ...);
int close(int fd);
ssize_t read(int fd, void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n);
int dup(int fd);
int dup2(int fd, int to);
int access(const char *path, int mode);
ssize_t readlink(const char *path, char *buf, size_t n);
long sysconf(int name);
pid_t getpid(void);

/* sys/stat.h: arm64 uses asm-generic's struct stat */
struct stat {
    dev_t st_dev;
    ino_t st_ino;
    mode_t st_mode;
    nlink_t st_nlink;
    uid_t st_uid;
    gid_t st_gid;
    dev_t st_rdev;
    unsigned long __pad1;
    off_t st_size;
    int st_blksize;
    int __pad2;
    long st_blocks;
    struct timespec st_atim;
    struct timespec st_mtim;
    struct timespec st_ctim;
    unsigned int __unused4;
    unsigned int __unused5;
};
#define S_IFMT 0170000
#define S_IFDIR 0040000
#define S_IFREG 0100000
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
int stat(const char *path, struct stat *st);
int fstat(int fd, struct stat *st);

/* sys/mman.h */
#define PROT_READ 1
#define PROT_WRITE 2
#define PROT_EXEC 4
#define MAP_SHARED 1
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20
#define MAP_FAILED ((void *)-1)
void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t offset);
int munmap(void *addr, size_t n);

/* dirent.h: bionic's struct dirent (64-bit inode and offset on every ABI) */
struct dirent {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[256];
};
int scandir(const char *dir, struct dirent ***found, int (*keep)(const struct dirent *),
            int (*order)(const struct dirent **, const struct dirent **));

/* sys/utsname.h */
struct utsname {
    char sysname[65];
    char nodename[65];
    char release[65];
    char version[65];
    char machine[65];
    char domainname[65];
};
int uname(struct utsname *u);

/* signal.h */
typedef void (*sighandler_t)(int);
#define SIG_DFL ((sighandler_t)0)
#define SIG_IGN ((sighandler_t)1)
#define SIGPIPE 13
sighandler_t signal(int sig, sighandler_t handler);

/* pthread.h: bionic's LP64 sizes (pthread_mutex_t is 40 bytes, pthread_cond_t 48), zero-initialised defaults */
typedef long pthread_t;
typedef struct { int32_t __private[10]; } pthread_mutex_t;
typedef struct { int32_t __private[12]; } pthread_cond_t;
typedef long pthread_mutexattr_t;
typedef long pthread_condattr_t;
typedef struct { uint64_t __private[7]; } pthread_attr_t;
typedef int pthread_once_t;
#define PTHREAD_ONCE_INIT 0
#define PTHREAD_MUTEX_INITIALIZER {{0}}
int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*run)(void *), void *arg);
int pthread_detach(pthread_t t);
int pthread_once(pthread_once_t *once, void (*fn)(void));
int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int pthread_mutex_lock(pthread_mutex_t *m);
int pthread_mutex_unlock(pthread_mutex_t *m);
int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr);
int pthread_cond_signal(pthread_cond_t *c);
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);

/* dlfcn.h: bionic's LP64 flag values */
#define RTLD_LAZY 1
#define RTLD_NOW 2
#define RTLD_LOCAL 0
#define RTLD_GLOBAL 0x100
#define RTLD_NOLOAD 4
#define RTLD_DEFAULT ((void *)0)
void *dlopen(const char *path, int flags);
void *dlsym(void *handle, const char *name);
int dlclose(void *handle);
char *dlerror(void);

/* sys/socket.h, sys/un.h: a local socket, for a stand-in Neuron runtime that asks its host to compute */
#define AF_UNIX 1
#define SOCK_STREAM 1
#define MSG_NOSIGNAL 0x4000
struct sockaddr { sa_family_t sa_family; char sa_data[14]; };
struct sockaddr_un { sa_family_t sun_family; char sun_path[108]; };
int socket(int domain, int type, int protocol);
int connect(int fd, const struct sockaddr *addr, socklen_t len);
ssize_t send(int fd, const void *buf, size_t n, int flags);
ssize_t recv(int fd, void *buf, size_t n, int flags);

#endif
