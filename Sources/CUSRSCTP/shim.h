// usrsctp (Debian's libusrsctp-dev), the SCTP stack of WebRTC's data channels, used over AF_CONN
// (packets in and out through the caller, no socket of the system's). Its pkg-config file adds
// -D flags SwiftPM rejects and the header needs none of them, so it is included directly.
// The shims fill the option structures whose layouts Swift handles badly (sockaddr_storage
// casts, flexible arrays, unions of option records) on the stack: nothing is allocated.
#ifndef PARLEY_CUSRSCTP_SHIM_H
#define PARLEY_CUSRSCTP_SHIM_H
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

static inline struct sockaddr_conn parley_sctp_address(void *addr, uint16_t port) {
    struct sockaddr_conn a;
    memset(&a, 0, sizeof a);
    a.sconn_family = AF_CONN;
    a.sconn_port = htons(port);
    a.sconn_addr = addr;
    return a;
}

static inline int parley_sctp_set_int(struct socket *s, int level, int option, int value) {
    return usrsctp_setsockopt(s, level, option, &value, (socklen_t)sizeof value) == 0 ? 0 : errno;
}

/// The path MTU for `addr`'s peer (or, before the association exists, for future ones), with
/// path MTU discovery off: every packet then fits one DTLS record.
static inline int parley_sctp_set_mtu(struct socket *s, void *addr, uint16_t port, uint32_t mtu) {
    struct sctp_paddrparams p;
    memset(&p, 0, sizeof p);
    if (addr) {
        struct sockaddr_conn a = parley_sctp_address(addr, port);
        memcpy(&p.spp_address, &a, sizeof a);
    } else {
        p.spp_assoc_id = SCTP_FUTURE_ASSOC;
    }
    p.spp_flags = SPP_PMTUD_DISABLE;
    p.spp_pathmtu = mtu;
    return usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &p, (socklen_t)sizeof p) == 0 ? 0 : errno;
}

/// A one-to-one AF_CONN socket, non-blocking, configured for data channels (RFC 8831 section 6):
/// no Nagle delay, stream reset on, the receive information with each message, the
/// notifications the endpoint reads, `streams` streams each way, aborting on close. Returns 0
/// or an errno value; `*out` is the socket.
static inline int parley_sctp_open(struct socket **out, uint16_t streams, uint32_t mtu) {
    struct socket *s = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (!s) return errno ? errno : ENOMEM;
    int err = 0;
    if (usrsctp_set_non_blocking(s, 1) < 0) err = errno;
    struct linger l = { 1, 0 };
    if (!err && usrsctp_setsockopt(s, SOL_SOCKET, SO_LINGER, &l, (socklen_t)sizeof l) < 0) err = errno;
    if (!err) err = parley_sctp_set_int(s, IPPROTO_SCTP, SCTP_NODELAY, 1);
    if (!err) err = parley_sctp_set_int(s, IPPROTO_SCTP, SCTP_RECVRCVINFO, 1);
    if (!err) err = parley_sctp_set_int(s, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, 0);
    if (!err) {
        struct sctp_assoc_value v = { SCTP_FUTURE_ASSOC, SCTP_ENABLE_RESET_STREAM_REQ };
        if (usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_ENABLE_STREAM_RESET, &v, (socklen_t)sizeof v) < 0) err = errno;
    }
    if (!err) {
        struct sctp_initmsg m;
        memset(&m, 0, sizeof m);
        m.sinit_num_ostreams = streams;
        m.sinit_max_instreams = streams;
        if (usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_INITMSG, &m, (socklen_t)sizeof m) < 0) err = errno;
    }
    uint16_t events[] = { SCTP_ASSOC_CHANGE, SCTP_STREAM_RESET_EVENT };
    for (unsigned i = 0; !err && i < sizeof events / sizeof events[0]; i++) {
        struct sctp_event e;
        memset(&e, 0, sizeof e);
        e.se_assoc_id = SCTP_ALL_ASSOC;
        e.se_type = events[i];
        e.se_on = 1;
        if (usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_EVENT, &e, (socklen_t)sizeof e) < 0) err = errno;
    }
    if (!err) err = parley_sctp_set_mtu(s, NULL, 0, mtu);
    if (err) { usrsctp_close(s); return err; }
    *out = s;
    return 0;
}

/// Binds `s` to (`addr`, `localPort`) and starts the association with (`addr`, `remotePort`):
/// both ends connect, as RFC 8841 has them. Returns 0 or an errno value.
static inline int parley_sctp_connect(struct socket *s, void *addr, uint16_t localPort, uint16_t remotePort, uint32_t mtu) {
    struct sockaddr_conn local = parley_sctp_address(addr, localPort);
    if (usrsctp_bind(s, (struct sockaddr *)&local, (socklen_t)sizeof local) < 0) return errno;
    struct sockaddr_conn remote = parley_sctp_address(addr, remotePort);
    if (usrsctp_connect(s, (struct sockaddr *)&remote, (socklen_t)sizeof remote) < 0 && errno != EINPROGRESS) return errno;
    return parley_sctp_set_mtu(s, addr, remotePort, mtu);
}

/// Sends one message on stream `sid` with payload protocol `ppid` (host order), unordered or
/// not, with the PR-SCTP policy `policy` (SCTP_PR_SCTP_NONE, _RTX or _TTL) and its value.
/// Returns the bytes taken, or -errno.
static inline long parley_sctp_send(struct socket *s, const void *data, size_t length, uint16_t sid, uint32_t ppid,
                                    int unordered, uint16_t policy, uint32_t value) {
    struct sctp_sendv_spa spa;
    memset(&spa, 0, sizeof spa);
    spa.sendv_flags = SCTP_SEND_SNDINFO_VALID;
    spa.sendv_sndinfo.snd_sid = sid;
    spa.sendv_sndinfo.snd_ppid = htonl(ppid);
    spa.sendv_sndinfo.snd_flags = SCTP_EOR | (unordered ? SCTP_UNORDERED : 0);
    if (policy != SCTP_PR_SCTP_NONE) {
        spa.sendv_flags |= SCTP_SEND_PRINFO_VALID;
        spa.sendv_prinfo.pr_policy = policy;
        spa.sendv_prinfo.pr_value = value;
    }
    ssize_t n = usrsctp_sendv(s, data, length, NULL, 0, &spa, (socklen_t)sizeof spa, SCTP_SENDV_SPA, 0);
    return n < 0 ? -(long)errno : (long)n;
}

/// Reads what the socket has into `buffer`: part or the end of a message (`*end` set at its
/// end) or a notification (`*notification` set), with its stream and payload protocol (host
/// order). Returns the bytes read (0 with neither flag: the association is gone), or -1 with
/// `*error` the errno value (0: nothing more to read now).
static inline long parley_sctp_receive(struct socket *s, void *buffer, size_t length, uint16_t *sid, uint32_t *ppid,
                                       int *end, int *notification, int *error) {
    struct sctp_rcvinfo info;
    memset(&info, 0, sizeof info);
    socklen_t infoLength = (socklen_t)sizeof info;
    unsigned int infoType = 0;
    struct sockaddr_conn from;
    socklen_t fromLength = (socklen_t)sizeof from;
    int flags = 0;
    ssize_t n = usrsctp_recvv(s, buffer, length, (struct sockaddr *)&from, &fromLength, &info, &infoLength, &infoType, &flags);
    if (n < 0) {
        *error = (errno == EWOULDBLOCK || errno == EAGAIN) ? 0 : errno;
        return -1;
    }
    *sid = info.rcv_sid;
    *ppid = ntohl(info.rcv_ppid);
    *end = (flags & MSG_EOR) != 0;
    *notification = (flags & MSG_NOTIFICATION) != 0;
    return (long)n;
}

/// Resets the outgoing side of stream `sid` (RFC 6525), closing a data channel (RFC 8831
/// section 6.7). Returns 0 or an errno value.
static inline int parley_sctp_reset_outgoing(struct socket *s, uint16_t sid) {
    union {
        struct sctp_reset_streams r;
        uint8_t bytes[sizeof(struct sctp_reset_streams) + sizeof(uint16_t)];
    } u;
    memset(&u, 0, sizeof u);
    u.r.srs_assoc_id = SCTP_ALL_ASSOC;
    u.r.srs_flags = SCTP_STREAM_RESET_OUTGOING;
    u.r.srs_number_streams = 1;
    u.r.srs_stream_list[0] = sid;
    return usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_RESET_STREAMS, &u, (socklen_t)sizeof u) == 0 ? 0 : errno;
}
#endif
