// libnice (0.1.21): ICE (RFC 8445) agents over GLib main contexts.
// No pkgConfig: its .pc file adds -pthread, a flag SwiftPM rejects, and its headers need GLib's
// include paths; so this header declares the GLib and libnice entry points it uses (types kept
// opaque) and holds the typed, prefixed shims for what Swift cannot call: g_object_set (variadic)
// and the signal handlers (C trampolines forwarding to one Swift callback through a context).
#ifndef PARLEY_CNICE_SHIM_H
#define PARLEY_CNICE_SHIM_H
#include <stddef.h>
#include <stdint.h>

// MARK: GLib and GObject (opaque types; declarations as in glib-2.0's headers).
typedef struct _GMainContext GMainContext;
typedef struct _GObject GObject;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GSList { void *data; struct _GSList *next; } GSList;
GMainContext *g_main_context_new(void);
void g_main_context_unref(GMainContext *context);
int g_main_context_iteration(GMainContext *context, int may_block);
void g_main_context_wakeup(GMainContext *context);
void g_main_context_push_thread_default(GMainContext *context);
void g_main_context_pop_thread_default(GMainContext *context);
void g_free(void *memory);
void g_slist_free(GSList *list);
void g_object_unref(void *object);
void g_object_set(void *object, const char *first_property_name, ...);
unsigned g_signal_handlers_disconnect_matched(void *instance, int mask, unsigned signal_id, uint32_t detail,
                                              void *closure, void *func, void *data);
unsigned long g_signal_connect_data(void *instance, const char *detailed_signal, void (*handler)(void),
                                    void *data, void (*destroy_data)(void *, void *), int connect_flags);

// MARK: libnice (opaque types; declarations as in nice/agent.h, address.h and candidate.h).
typedef struct _NiceAgent NiceAgent;
typedef struct _NiceCandidate NiceCandidate;
typedef struct _NiceAddress NiceAddress;
/// NICE_COMPATIBILITY_RFC5245: full ICE as RFC 5245 and its successor RFC 8445 describe it.
static const int parley_nice_compatibility_rfc5245 = 0;
/// NiceAgentOption bits.
static const int parley_nice_option_regular_nomination = 1 << 0;
static const int parley_nice_option_ice_trickle = 1 << 3;
/// NiceComponentState values.
enum {
    PARLEY_NICE_STATE_DISCONNECTED = 0,
    PARLEY_NICE_STATE_GATHERING = 1,
    PARLEY_NICE_STATE_CONNECTING = 2,
    PARLEY_NICE_STATE_CONNECTED = 3,
    PARLEY_NICE_STATE_READY = 4,
    PARLEY_NICE_STATE_FAILED = 5,
};
NiceAgent *nice_agent_new_full(GMainContext *context, int compatibility, int options);
NiceAddress *nice_address_new(void);
void nice_address_free(NiceAddress *address);
int nice_address_set_from_string(NiceAddress *address, const char *text);
int nice_agent_add_local_address(NiceAgent *agent, NiceAddress *address);
unsigned nice_agent_add_stream(NiceAgent *agent, unsigned components);
int nice_agent_set_port_range(NiceAgent *agent, unsigned stream, unsigned component,
                              unsigned min_port, unsigned max_port);
int nice_agent_gather_candidates(NiceAgent *agent, unsigned stream);
int nice_agent_get_local_credentials(NiceAgent *agent, unsigned stream, char **ufrag, char **pwd);
int nice_agent_set_local_credentials(NiceAgent *agent, unsigned stream, const char *ufrag, const char *pwd);
int nice_agent_set_remote_credentials(NiceAgent *agent, unsigned stream, const char *ufrag, const char *pwd);
int nice_agent_set_remote_candidates(NiceAgent *agent, unsigned stream, unsigned component,
                                     const GSList *candidates);
int nice_agent_peer_candidate_gathering_done(NiceAgent *agent, unsigned stream);
NiceCandidate *nice_agent_parse_remote_candidate_sdp(NiceAgent *agent, unsigned stream, const char *sdp);
char *nice_agent_generate_local_candidate_sdp(NiceAgent *agent, NiceCandidate *candidate);
GSList *nice_agent_get_local_candidates(NiceAgent *agent, unsigned stream, unsigned component);
void nice_candidate_free(NiceCandidate *candidate);
int nice_agent_send(NiceAgent *agent, unsigned stream, unsigned component, unsigned length, const char *buffer);
int nice_agent_attach_recv(NiceAgent *agent, unsigned stream, unsigned component, GMainContext *context,
                           void (*receive)(NiceAgent *, unsigned, unsigned, unsigned, char *, void *),
                           void *user_data);
void nice_agent_close_async(NiceAgent *agent, void (*done)(GObject *, GAsyncResult *, void *), void *user_data);

// MARK: Shims.

/// Sets the agent's role and the properties Parley relies on: UDP only (no ICE-TCP), no UPnP
/// port mapping, binding requests (which need an answer) as keepalives on the selected pair,
/// and a STUN server (an IP address; NULL for none).
static inline void parley_nice_agent_configure(NiceAgent *agent, int controlling,
                                               const char *stun_server, unsigned stun_port) {
    g_object_set(agent, "controlling-mode", controlling, "ice-udp", 1, "ice-tcp", 0, "upnp", 0,
                 "keepalive-conncheck", 1, (char *)NULL);
    if (stun_server != NULL)
        g_object_set(agent, "stun-server", stun_server, "stun-server-port", stun_port, (char *)NULL);
}

/// What a ``ParleyNiceSink`` reports.
enum {
    PARLEY_NICE_EVENT_GATHERING_DONE = 0,  ///< local candidates all gathered
    PARLEY_NICE_EVENT_STATE = 1,           ///< `state` is the component's new NiceComponentState
    PARLEY_NICE_EVENT_SELECTED_PAIR = 2,   ///< `line` and `line2`: the local and remote candidates
    PARLEY_NICE_EVENT_CANDIDATE = 3,       ///< `line`: a new local candidate
};

/// The Swift side of an agent's signals and received datagrams: `context` is passed back to
/// both functions, which run on the thread iterating the agent's main context. Candidates are
/// handed over as SDP `a=candidate:` lines, valid during the call only.
typedef struct ParleyNiceSink {
    void *context;
    void (*event)(void *context, int kind, unsigned state, const char *line, const char *line2);
    void (*datagram)(void *context, const void *bytes, size_t count);
} ParleyNiceSink;

static void parley_nice_on_gathering_done(NiceAgent *agent, unsigned stream, void *data) {
    const ParleyNiceSink *sink = data;
    (void)agent; (void)stream;
    sink->event(sink->context, PARLEY_NICE_EVENT_GATHERING_DONE, 0, NULL, NULL);
}

static void parley_nice_on_state(NiceAgent *agent, unsigned stream, unsigned component,
                                 unsigned state, void *data) {
    const ParleyNiceSink *sink = data;
    (void)agent; (void)stream; (void)component;
    sink->event(sink->context, PARLEY_NICE_EVENT_STATE, state, NULL, NULL);
}

static void parley_nice_on_selected_pair(NiceAgent *agent, unsigned stream, unsigned component,
                                         NiceCandidate *local, NiceCandidate *remote, void *data) {
    const ParleyNiceSink *sink = data;
    char *l = nice_agent_generate_local_candidate_sdp(agent, local);
    char *r = nice_agent_generate_local_candidate_sdp(agent, remote);
    (void)stream; (void)component;
    sink->event(sink->context, PARLEY_NICE_EVENT_SELECTED_PAIR, 0, l, r);
    g_free(l);
    g_free(r);
}

static void parley_nice_on_candidate(NiceAgent *agent, NiceCandidate *candidate, void *data) {
    const ParleyNiceSink *sink = data;
    char *line = nice_agent_generate_local_candidate_sdp(agent, candidate);
    sink->event(sink->context, PARLEY_NICE_EVENT_CANDIDATE, 0, line, NULL);
    g_free(line);
}

static void parley_nice_on_datagram(NiceAgent *agent, unsigned stream, unsigned component,
                                    unsigned count, char *bytes, void *data) {
    const ParleyNiceSink *sink = data;
    (void)agent; (void)stream; (void)component;
    sink->datagram(sink->context, bytes, count);
}

/// Connects the four signals Parley uses and attaches `sink` as the receiver of component 1 of
/// `stream` on `context`. `sink` must outlive the agent. Returns 0 when the receiver could not
/// be attached.
static inline int parley_nice_agent_attach(NiceAgent *agent, unsigned stream, GMainContext *context,
                                           const ParleyNiceSink *sink) {
    void *data = (void *)sink;
    g_signal_connect_data(agent, "candidate-gathering-done", (void (*)(void))parley_nice_on_gathering_done, data, NULL, 0);
    g_signal_connect_data(agent, "component-state-changed", (void (*)(void))parley_nice_on_state, data, NULL, 0);
    g_signal_connect_data(agent, "new-selected-pair-full", (void (*)(void))parley_nice_on_selected_pair, data, NULL, 0);
    g_signal_connect_data(agent, "new-candidate-full", (void (*)(void))parley_nice_on_candidate, data, NULL, 0);
    return nice_agent_attach_recv(agent, stream, 1, context, parley_nice_on_datagram, data);
}

/// Hands a remote candidate, as an SDP `a=candidate:` line, to the agent for component 1 of
/// `stream`. Returns 1 when added, 0 when libnice could not read it (e.g. a host name
/// address) and -1 when the agent refused it.
static inline int parley_nice_agent_add_remote_candidate(NiceAgent *agent, unsigned stream, const char *line) {
    NiceCandidate *candidate = nice_agent_parse_remote_candidate_sdp(agent, stream, line);
    if (candidate == NULL) return 0;
    GSList node = { candidate, NULL };
    int added = nice_agent_set_remote_candidates(agent, stream, 1, &node);
    nice_candidate_free(candidate);
    return added == 1 ? 1 : -1;
}

/// Calls `each` with every local candidate of component 1 of `stream`, as an SDP line.
static inline void parley_nice_agent_local_candidates(NiceAgent *agent, unsigned stream, void *context,
                                                      void (*each)(void *context, const char *line)) {
    GSList *list = nice_agent_get_local_candidates(agent, stream, 1);
    for (GSList *item = list; item != NULL; item = item->next) {
        char *line = nice_agent_generate_local_candidate_sdp(agent, item->data);
        each(context, line);
        g_free(line);
        nice_candidate_free(item->data);
    }
    g_slist_free(list);
}

static void parley_nice_on_closed(GObject *agent, GAsyncResult *result, void *data) {
    (void)agent; (void)result;
    *(int *)data = 1;
}

/// Closes the agent's sockets, iterating `context` (owned by the calling thread) until libnice
/// has finished closing; detaches `sink` from the agent (it is never called again, and may be
/// freed); releases the agent.
static inline void parley_nice_agent_close(NiceAgent *agent, unsigned stream, GMainContext *context,
                                           const ParleyNiceSink *sink) {
    int closed = 0;
    nice_agent_close_async(agent, parley_nice_on_closed, &closed);
    while (!closed) g_main_context_iteration(context, 1);
    nice_agent_attach_recv(agent, stream, 1, context, NULL, NULL);
    g_signal_handlers_disconnect_matched(agent, 1 << 4 /* G_SIGNAL_MATCH_DATA */, 0, 0, NULL, NULL, (void *)sink);
    g_object_unref(agent);
}
#endif
