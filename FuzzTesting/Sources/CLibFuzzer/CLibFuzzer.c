// Declarations only (include/CLibFuzzer.h); the driver itself comes from libFuzzer at link time.
#include "CLibFuzzer.h"
