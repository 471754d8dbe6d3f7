#ifndef TRACKHUB_CROUTINO_SHIM_H
#define TRACKHUB_CROUTINO_SHIM_H
/* Debian's libroutino-dev: the routing library (libroutino.so) of the Routino router. */
#include <routino.h>

/* Routino_CheckAPIVersion is a macro over the header's API version: it does not import. */
static inline int trackhub_routino_check_api_version(void) { return Routino_CheckAPIVersion(); }

/* Routino_errno is a global variable: Swift 6 refuses to read it directly. Read only on the
   router's one queue (RouterQueue), so there is no race. */
static inline int trackhub_routino_errno(void) { return Routino_errno; }
#endif
