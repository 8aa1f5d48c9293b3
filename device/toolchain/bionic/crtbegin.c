/* What the NDK's crtbegin_dynamic.o gives an Android executable (AOSP bionic/libc/arch-common/bionic/crtbegin.c):
   `_start` hands the initial stack pointer (argc, argv, envp, auxv) to libc's __libc_init, which calls main and
   exits with its status; bionic's linker has already run the executable's init arrays. And __dso_handle. */
#include <stddef.h>

int main(int argc, char **argv, char **envp);

/* bionic's structors_array_t (API 23): preinit, init and fini arrays. __libc_init only reads fini_array, to run it
   at exit when it starts with bionic's -1 sentinel; these programs have no destructors, so none is passed. */
typedef struct {
    void (**preinit_array)(void);
    void (**init_array)(void);
    void (**fini_array)(void);
} structors_array_t;

__attribute__((noreturn)) void __libc_init(void *raw_args, void (*onexit)(void),
                                           int (*slingshot)(int, char **, char **),
                                           const structors_array_t *structors);

__attribute__((visibility("hidden"))) void *__dso_handle = &__dso_handle;

__attribute__((used, noreturn)) static void start_main(void *raw_args) {
    static const structors_array_t none = {NULL, NULL, NULL};
    __libc_init(raw_args, NULL, &main, &none);
}

/* The frame pointer and link register zeroed so that a backtrace ends here, as AOSP's _start does. */
__asm__(".text\n.global _start\n.type _start,%function\n_start:\n"
        "mov x29, #0\nmov x30, #0\nmov x0, sp\nb start_main\n.size _start, .-_start\n");
