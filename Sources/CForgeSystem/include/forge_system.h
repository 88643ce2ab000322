#ifndef FORGE_SYSTEM_H
#define FORGE_SYSTEM_H

/// Swaps two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE, Darwin renamex_np RENAME_SWAP): a
/// folder written beside its target replaces it with no instant at which neither, or a mix, is there.
/// Returns 0, or -1 with errno set (EINVAL or ENOSYS where the file system or kernel cannot exchange).
int forge_exchange_paths(const char *first, const char *second);

#endif
