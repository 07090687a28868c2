// Thread names: glibc declares pthread_setname_np/pthread_getname_np only under _GNU_SOURCE, which
// Swift's Glibc module is not built with. Both exist in every glibc since 2.12.
#include <pthread.h>
#include <stddef.h>
#include <errno.h>

int pthread_setname_np(pthread_t thread, const char *name);
int pthread_getname_np(pthread_t thread, char *name, size_t length);

/// Names the calling thread (at most 15 bytes are kept). Returns 0 or an error number.
static inline int vitrine_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/// The calling thread's name into `name` (`length` >= 16). Returns 0 or an error number.
static inline int vitrine_current_thread_name(char *name, size_t length) {
    return pthread_getname_np(pthread_self(), name, length);
}

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Makes the calling thread (only it: Linux keeps a nice value per thread) `increment` nicer than
/// it is. Returns 0 or -1 (errno set).
static inline int vitrine_renice_current_thread(int increment) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)tid);
    if (current == -1 && errno != 0) return -1;
    return setpriority(PRIO_PROCESS, (id_t)tid, current + increment);
}
