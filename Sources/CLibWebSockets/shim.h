#ifndef TRACKHUB_CLIBWEBSOCKETS_SHIM_H
#define TRACKHUB_CLIBWEBSOCKETS_SHIM_H
/* The only place TrackHub includes libwebsockets. Macros that Swift cannot import
   (expressions, multi-term option masks, variadic loggers) are re-exported here as
   tiny inline functions. */
#include <libwebsockets.h>

/* Headroom lws needs in front of every payload handed to lws_write. */
static inline size_t trackhub_lws_pre(void) { return LWS_PRE; }

/* Option masks, as unsigned 64-bit values (the single-bit macros import as Int64). */
static inline uint64_t trackhub_opt_libev(void) { return (uint64_t)LWS_SERVER_OPTION_LIBEV; }
static inline uint64_t trackhub_opt_validate_utf8(void) { return (uint64_t)LWS_SERVER_OPTION_VALIDATE_UTF8; }
static inline uint64_t trackhub_opt_explicit_vhosts(void) { return (uint64_t)LWS_SERVER_OPTION_EXPLICIT_VHOSTS; }
static inline uint64_t trackhub_opt_do_ssl_global_init(void) { return (uint64_t)LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT; }
static inline uint64_t trackhub_opt_disable_ipv6(void) { return (uint64_t)LWS_SERVER_OPTION_DISABLE_IPV6; }
static inline uint64_t trackhub_opt_allow_listen_share(void) { return (uint64_t)LWS_SERVER_OPTION_ALLOW_LISTEN_SHARE; }
static inline uint64_t trackhub_opt_fail_upon_unable_to_bind(void) { return (uint64_t)LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND; }
static inline uint64_t trackhub_opt_ipv6_only(void) { return (uint64_t)(LWS_SERVER_OPTION_IPV6_V6ONLY_MODIFY | LWS_SERVER_OPTION_IPV6_V6ONLY_VALUE); }
static inline uint64_t trackhub_opt_disable_os_ca_certs(void) { return (uint64_t)LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS; }

/* Log levels: errors and warnings only (the Debian libev plugin is chatty at NOTICE). */
static inline void trackhub_lws_quiet_logs(void) { lws_set_log_level(LLL_ERR | LLL_WARN, NULL); }
static inline void trackhub_lws_silent_logs(void) { lws_set_log_level(0, NULL); }
/* The server's lines go through `emit` (the hub's logger: its format, its redaction of
   tokens). `verbose` adds NOTICE (--log-level debug). A NULL emit would keep the current one. */
static inline void trackhub_lws_route_logs(void (*emit)(int level, const char *line), int verbose) {
    lws_set_log_level(LLL_ERR | LLL_WARN | (verbose ? LLL_NOTICE : 0), emit);
}
static inline int trackhub_lll_err(void) { return LLL_ERR; }
static inline int trackhub_lll_warn(void) { return LLL_WARN; }
/* The close code at the head of a close frame's payload (network order); 0: none. */
static inline unsigned short trackhub_close_code(const void *payload, size_t len) {
    const unsigned char *p = (const unsigned char *)payload;
    return (p && len >= 2) ? (unsigned short)((p[0] << 8) | p[1]) : 0;
}

/* Writes a text frame; the payload must sit after trackhub_lws_pre() bytes of headroom. */
static inline int trackhub_lws_write_text(struct lws *wsi, unsigned char *payload, size_t len) {
    return lws_write(wsi, payload, len, LWS_WRITE_TEXT);
}
/* A ping with a short payload; `payload` must have LWS_PRE bytes of headroom and room for 2 bytes. */
static inline int trackhub_lws_write_ping(struct lws *wsi, unsigned char *payload) {
    payload[0] = 't'; payload[1] = 'h';
    return lws_write(wsi, payload, 2, LWS_WRITE_PING);
}
static inline int trackhub_lws_write_http(struct lws *wsi, unsigned char *payload, size_t len) {
    return lws_write(wsi, payload, len, LWS_WRITE_HTTP);
}
static inline int trackhub_lws_write_http_final(struct lws *wsi, unsigned char *payload, size_t len) {
    return lws_write(wsi, payload, len, LWS_WRITE_HTTP_FINAL);
}

/* Header token ids used by the server (enum values import awkwardly). */
static inline int trackhub_tok_get_uri(void) { return WSI_TOKEN_GET_URI; }
static inline int trackhub_tok_post_uri(void) { return WSI_TOKEN_POST_URI; }
static inline int trackhub_tok_put_uri(void) { return WSI_TOKEN_PUT_URI; }
static inline int trackhub_tok_delete_uri(void) { return WSI_TOKEN_DELETE_URI; }
static inline int trackhub_tok_options_uri(void) { return WSI_TOKEN_OPTIONS_URI; }
static inline int trackhub_tok_origin(void) { return WSI_TOKEN_ORIGIN; }
static inline int trackhub_tok_host(void) { return WSI_TOKEN_HOST; }
static inline int trackhub_tok_authorization(void) { return WSI_TOKEN_HTTP_AUTHORIZATION; }
static inline int trackhub_tok_content_length(void) { return WSI_TOKEN_HTTP_CONTENT_LENGTH; }
static inline int trackhub_tok_transfer_encoding(void) { return WSI_TOKEN_HTTP_TRANSFER_ENCODING; }
static inline int trackhub_tok_uri_args(void) { return WSI_TOKEN_HTTP_URI_ARGS; }
static inline int trackhub_tok_protocol(void) { return WSI_TOKEN_PROTOCOL; }

/* A timer lws can schedule: the sul must come first so the callback can find its owner. */
struct trackhub_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
};
static inline void *trackhub_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((struct trackhub_timer *)sul)->owner;
}
static inline void trackhub_timer_schedule(struct lws_context *ctx, struct trackhub_timer *t,
                                           sul_cb_t cb, int64_t delay_us) {
    lws_sul_schedule(ctx, 0, &t->sul, cb, (lws_usec_t)delay_us);
}
static inline void trackhub_timer_cancel(struct trackhub_timer *t) { lws_sul_cancel(&t->sul); }

/* Kills a connection from outside its own callback; lws sends the close frame set by
   lws_close_reason if the socket takes it. */
static inline void trackhub_lws_kill_async(struct lws *wsi) {
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}
static inline void trackhub_lws_set_close_timeout(struct lws *wsi, int secs) {
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, secs);
}

/* lws arms PENDING_TIMEOUT_HTTP_CONTENT (the context's timeout_secs) before LWS_CALLBACK_HTTP
   and extends it only for the files it serves itself, so an answer written by the user would
   be cut that many seconds after its request, however well it was moving. Renewed after each
   write, the timeout counts from the last progress instead. */
static inline void trackhub_lws_renew_http_timeout(struct lws *wsi, int secs) {
    lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, secs);
}

/* A retry/idle policy whose validity checks are off (secs_since_valid_hangup 0). Without
   any policy lws 4.1.6 applies its default one (ping after 300 s, hang up after 310 s): a
   validity timer per connection in one sorted list, re-inserted at the list's far end, a
   walk over every connection, whenever a connection proves alive (each PONG). The hub and
   the load generator send their own pings instead. */
static inline const lws_retry_bo_t *trackhub_no_validity_policy(void) {
    static const lws_retry_bo_t policy = { 0 };
    return &policy;
}

/* The readiness set (LWSServerHost+InputWaiting): a private epoll set holding every
   WebSocket's socket, level-triggered for input, asked with a zero timeout whether any
   peer's bytes wait unread. It only reads readiness; lws's own loop still does the reading. */
#include <sys/epoll.h>
#include <unistd.h>
static inline int trackhub_readiness_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int trackhub_readiness_add(int set, int fd) {
    struct epoll_event event = { .events = EPOLLIN | EPOLLRDHUP };
    event.data.fd = fd;
    return epoll_ctl(set, EPOLL_CTL_ADD, fd, &event);
}
static inline void trackhub_readiness_remove(int set, int fd) { (void)epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL); }
static inline int trackhub_readiness_any(int set) {
    struct epoll_event event;
    return epoll_wait(set, &event, 1, 0) > 0;
}
static inline void trackhub_readiness_close(int set) { if (set >= 0) close(set); }
static inline int trackhub_lws_socket_fd(struct lws *wsi) { return (int)lws_get_socket_fd(wsi); }

/* Whether the peer of a socket has closed its side or reset it: a peek that reads the end
   (0) or fails for a reason other than "nothing yet". lws does not read an HTTP connection
   while its answer is pending, so it would not notice until it writes the answer. */
#include <sys/socket.h>
#include <errno.h>
static inline int trackhub_peer_closed(int fd) {
    if (fd < 0) return 1;
    unsigned char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return 1;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return 1;
    return 0;
}
#endif
