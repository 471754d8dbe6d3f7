#ifndef TRACKHUB_CSQLITE_SHIM_H
#define TRACKHUB_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro cast of -1 to a function pointer: it does not import. */
static inline sqlite3_destructor_type trackhub_sqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
