// OpenSSL 3 (libssl, libcrypto): DTLS 1.2 with the use_srtp extension (RFC 5764), ECDSA keys
// and self-signed X.509 certificates for DTLS-SRTP (RFC 5763).
#ifndef PARLEY_CDTLS_SHIM_H
#define PARLEY_CDTLS_SHIM_H
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/srtp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/// A fresh ECDSA key on NIST P-256 (EVP_EC_gen is a macro over a variadic function); NULL on failure.
static inline EVP_PKEY *parley_dtls_ec_p256_key(void) {
    return EVP_EC_gen("P-256");
}

/// Restricts a context to DTLS 1.2 (the min/max protocol version setters are SSL_CTX_ctrl macros).
static inline int parley_dtls_ctx_use_dtls12(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION)
        && SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION);
}

/// Never asks the BIO for the path MTU (SSL_OP_NO_QUERY_MTU is a 64-bit macro expression).
static inline void parley_dtls_ctx_no_query_mtu(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_QUERY_MTU);
}

/// The largest datagram the connection writes, UDP payload bytes (a SSL_ctrl macro).
static inline int parley_dtls_set_link_mtu(SSL *ssl, long mtu) {
    return (int)DTLS_set_link_mtu(ssl, mtu);
}

/// Time left on the handshake's retransmission timer, in microseconds; -1 when none runs
/// (DTLSv1_get_timeout is a SSL_ctrl macro over a struct timeval).
static inline long long parley_dtls_timeout_us(SSL *ssl) {
    struct timeval left;
    if (DTLSv1_get_timeout(ssl, &left) != 1) return -1;
    return (long long)left.tv_sec * 1000000 + left.tv_usec;
}

/// Retransmits the last flight when the timer has expired: 1 if it did, 0 if not due, -1 on
/// failure (too many retransmissions). A SSL_ctrl macro.
static inline int parley_dtls_handle_timeout(SSL *ssl) {
    return (int)DTLSv1_handle_timeout(ssl);
}

/// Marks a BIO's read as "try again later" (BIO_set_retry_read is a macro).
static inline void parley_dtls_bio_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}

/// Clears a BIO's retry flags after a read or write that went through (a macro).
static inline void parley_dtls_bio_clear_retry(BIO *bio) {
    BIO_clear_retry_flags(bio);
}
#endif
