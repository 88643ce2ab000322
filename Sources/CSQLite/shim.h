#include <sqlite3.h>

/// SQLITE_TRANSIENT (`(sqlite3_destructor_type)-1`) is a macro Swift cannot import: SQLite copies the bytes bound.
static inline sqlite3_destructor_type csqlite_transient(void) { return (sqlite3_destructor_type)-1; }
