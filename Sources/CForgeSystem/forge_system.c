#define _GNU_SOURCE
#include "forge_system.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__APPLE__)
int forge_exchange_paths(const char *first, const char *second) { return renamex_np(first, second, RENAME_SWAP); }
#elif defined(__linux__)
int forge_exchange_paths(const char *first, const char *second) {
    return renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
}
#else
int forge_exchange_paths(const char *first, const char *second) {
    (void)first;
    (void)second;
    errno = ENOSYS;
    return -1;
}
#endif

static int forge_signal_pipe[2] = {-1, -1};

static void forge_signal_to_pipe(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    // Async-signal-safe; a full pipe drops the byte (the reader has signals enough to act on).
    ssize_t written = write(forge_signal_pipe[1], &byte, 1);
    (void)written;
    errno = saved;
}

static int forge_pipe_flags(int descriptor) {
    int flags = fcntl(descriptor, F_GETFL);
    if (flags == -1 || fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == -1) return -1;
    int fdflags = fcntl(descriptor, F_GETFD);
    if (fdflags == -1 || fcntl(descriptor, F_SETFD, fdflags | FD_CLOEXEC) == -1) return -1;
    return 0;
}

int forge_signals_to_pipe(const int *signals, int count) {
    if (forge_signal_pipe[0] == -1) {
        int ends[2];
        if (pipe(ends) != 0) return -1;
        if (forge_pipe_flags(ends[0]) != 0 || forge_pipe_flags(ends[1]) != 0) {
            int saved = errno;
            close(ends[0]);
            close(ends[1]);
            errno = saved;
            return -1;
        }
        forge_signal_pipe[0] = ends[0];
        forge_signal_pipe[1] = ends[1];
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = forge_signal_to_pipe;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigset_t wanted;
    sigemptyset(&wanted);
    for (int index = 0; index < count; index++) {
        if (sigaction(signals[index], &action, NULL) != 0) return -1;
        sigaddset(&wanted, signals[index]);
    }
    // A parent (a test runner, a CI agent) may have blocked them, and a child inherits that.
    int unblocked = pthread_sigmask(SIG_UNBLOCK, &wanted, NULL);
    if (unblocked != 0) {
        errno = unblocked;
        return -1;
    }
    return forge_signal_pipe[0];
}

int forge_signals_default(const int *signals, int count) {
    for (int index = 0; index < count; index++) {
        if (signal(signals[index], SIG_DFL) == SIG_ERR) return -1;
    }
    return 0;
}

int forge_name_thread(const char *name) {
    char cut[16];
    snprintf(cut, sizeof cut, "%s", name);
#if defined(__APPLE__)
    return pthread_setname_np(cut);
#elif defined(__linux__)
    return pthread_setname_np(pthread_self(), cut);
#else
    (void)cut;
    return ENOSYS;
#endif
}
