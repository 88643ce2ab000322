#ifndef FORGE_SYSTEM_H
#define FORGE_SYSTEM_H

/// Swaps two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE, Darwin renamex_np RENAME_SWAP): a
/// folder written beside its target replaces it with no instant at which neither, or a mix, is there.
/// Returns 0, or -1 with errno set (EINVAL or ENOSYS where the file system or kernel cannot exchange).
int forge_exchange_paths(const char *first, const char *second);

/// Routes the `count` signals of `signals` to a pipe from the moment it returns: a handler installed with sigaction
/// writes each one's number (a byte) to the pipe, whichever thread it lands on; the calling thread stops blocking
/// them. Returns the pipe's read end (non-blocking, close-on-exec), the same for every call of the process, or -1
/// with errno set. Dispatch's own signal sources arm later, on their manager thread: a signal before that is lost.
int forge_signals_to_pipe(const int *signals, int count);

/// Gives the `count` signals of `signals` their default action back. Returns 0, or -1 with errno set.
int forge_signals_default(const int *signals, int count);

/// Names the calling thread (`ps -L`, debuggers), cut to the 15 bytes Linux keeps: pthread_setname_np, which
/// Glibc's Swift module does not export (it is a GNU extension). Returns 0, or an error number.
int forge_name_thread(const char *name);

#endif
