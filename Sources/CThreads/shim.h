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

#include <sched.h>
#ifndef SCHED_IDLE
#define SCHED_IDLE 5 /* <sched.h> defines it only under _GNU_SOURCE */
#endif

/// Moves the calling thread to SCHED_IDLE: it runs only on CPU time no normal thread wants (no
/// privilege needed). Returns 0 or -1 (errno set).
static inline int vitrine_idle_current_thread(void) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct sched_param parameter = { .sched_priority = 0 };
    return sched_setscheduler(tid, SCHED_IDLE, &parameter);
}

/// The calling thread's nice value, or -100 (errno set).
static inline int vitrine_current_thread_nice(void) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)tid);
    return (current == -1 && errno != 0) ? -100 : current;
}

/// Lowers the calling thread's priority by `steps` nice steps from where it is (at most to 19):
/// on Linux a nice value belongs to a thread, and threads it starts inherit it. Lowering needs no
/// privilege; raising it back needs CAP_SYS_NICE or an RLIMIT_NICE that allows it. Returns the
/// new nice value, or -100 (errno set).
static inline int vitrine_lower_current_thread_priority(int steps) {
    int current = vitrine_current_thread_nice();
    if (current == -100) return -100;
    int lowered = current + steps > 19 ? 19 : current + steps;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (setpriority(PRIO_PROCESS, (id_t)tid, lowered) != 0) return -100;
    return lowered;
}
