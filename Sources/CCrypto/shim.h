#ifndef TRACKHUB_CCRYPTO_SHIM_H
#define TRACKHUB_CCRYPTO_SHIM_H
/* The only place TrackHub includes OpenSSL's libcrypto: HMAC-SHA256 for HS256 tokens and
   CRYPTO_memcmp for comparing signatures in constant time. */
#include <stddef.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

/* HMAC-SHA256 of data under key into out (32 bytes). Returns 1 on success, 0 on failure. */
static inline int trackhub_hmac_sha256(const void *key, int key_len, const unsigned char *data, size_t data_len,
                                       unsigned char *out) {
    unsigned int out_len = 0;
    static const unsigned char empty = 0;
    if (key == NULL || key_len == 0) key = &empty;
    if (data == NULL) data = &empty;
    if (HMAC(EVP_sha256(), key, key_len, data, data_len, out, &out_len) == NULL) return 0;
    return out_len == 32;
}

/* 0 when the n bytes at a and b are equal; the time taken does not depend on the contents. */
static inline int trackhub_memcmp_consttime(const void *a, const void *b, size_t n) {
    return CRYPTO_memcmp(a, b, n);
}
#endif
