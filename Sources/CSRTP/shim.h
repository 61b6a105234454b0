// libsrtp2: SRTP and SRTCP (RFC 3711) protection, with AES-CM/HMAC-SHA1 and AES-GCM (RFC 7714).
#ifndef PARLEY_CSRTP_SHIM_H
#define PARLEY_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#include <sys/random.h>

/// Bytes libsrtp may write after an RTP packet's end when protecting it (tag and MKI).
static const int parley_srtp_max_trailer = SRTP_MAX_TRAILER_LEN;

/// AES-128 counter mode with an 80-bit HMAC-SHA1 tag (a macro in srtp.h).
static inline void parley_srtp_policy_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *p) {
    srtp_crypto_policy_set_rtp_default(p);
}
#endif
