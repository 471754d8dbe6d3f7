#ifndef TRACKHUB_CHIREDIS_SHIM_H
#define TRACKHUB_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>

/* The reply type macros are plain integers; spelled out so Swift sees constants. */
enum {
    trackhub_redis_reply_string = REDIS_REPLY_STRING,
    trackhub_redis_reply_array = REDIS_REPLY_ARRAY,
    trackhub_redis_reply_integer = REDIS_REPLY_INTEGER,
    trackhub_redis_reply_nil = REDIS_REPLY_NIL,
    trackhub_redis_reply_status = REDIS_REPLY_STATUS,
    trackhub_redis_reply_error = REDIS_REPLY_ERROR,
};
#endif
