#ifndef C_LIB_FUZZER_H
#define C_LIB_FUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer). SwiftPM gives every executable an entry
/// point of its own (`<Module>_main`, aliased to `main`), so the fuzz targets call the driver from there
/// instead of letting libFuzzer's `main` run.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
