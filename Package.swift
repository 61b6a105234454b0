// swift-tools-version: 6.0
//
// Parley: a real-time media pipeline and voice-activity-detection library for Linux.
//
// Read this file top to bottom to see the whole design. Each target depends on exactly the
// modules it imports:
//   Core: frames, formats, clocks, and the two seams (capture sources, the jitter buffer's
//       decoder); no dependency.
//   RTP (packets, RTCP, payloads, the RTP/RTCP classifier), Voice (VAD, talk and active
//       speaker detection): on Core only. Jitter (jitter buffer, VP8 assembly): Core and RTP.
//   SDP (session descriptions, the RTP call's offers, WebRTC's JSEP offers and answers): on RTP.
//   Network: the packet-transport seam, UDP, and the HTTP endpoint where a browser posts its
//       WebRTC offer (WHIP style); Core and RTP.
//   C wrappers: Codecs (Opus, VPX), Media (files, libsndfile), Devices (ALSA, V4L2, test
//       sources; on Media), SRTP (libsrtp2, SDES keys from SDP, and the SRTP transport over any
//       Network transport), ICE (libnice's agent for WebRTC transports; on SDP), DTLS (OpenSSL's
//       DTLS 1.2 for DTLS-SRTP keys and data channels, without a socket; on SRTP).
//   SCTP (WebRTC's data channels: usrsctp's SCTP over DTLS application data, DCEP; on Core).
//   WebRTC (the WebRTC transport: ICE, DTLS-SRTP and SRTP behind the packet-transport seam, and
//       its data channels).
//   Detect (offline talk detection over recordings): Media and Voice; Janus recordings (.mjr)
//       through Call's receive path (RTP, Jitter, Codecs).
//   Echo (echo cancellation of the capture against the playout: WebRTC's AEC, the bulk
//       delay, far-end and double-talk state): on its C library only.
//   Call (pipelines, participants, events, the session): Codecs, RTP, Jitter, Voice, Network, Echo.
//       No devices, files or SRTP: a call client links ALSA, V4L2 or libsndfile only if it
//       imports Devices or Media for its sources itself.
//   Janus (a client of the Janus media server's HTTP API): Foundation only, beside the rest.
//   Rooms (a participant in a Janus VideoRoom or AudioBridge room): Janus's signalling, the
//       media through a Call session.
//   Simulation (network simulator, traces and replay, simulated link and room): on Call,
//       Detect and the modules under them; no other library depends on it; the front ends,
//       benchmarks and tests do.
//   thin front ends: the `parley` CLI and the `parley-bench` benchmark executable; the examples
//       (`call-client` on Call, `join-room` on Rooms).
// Only Codecs, Media, Devices, Echo, SRTP, ICE, DTLS and SCTP import C libraries (Network and Core the C library's
// sockets and clocks). Everything else builds anywhere.

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "Parley",
    products: [
        .library(name: "ParleyCore", targets: ["ParleyCore"]),
        .library(name: "ParleyCodecs", targets: ["ParleyCodecs"]),
        .library(name: "ParleyMedia", targets: ["ParleyMedia"]),
        .library(name: "ParleyDevices", targets: ["ParleyDevices"]),
        .library(name: "ParleyRTP", targets: ["ParleyRTP"]),
        .library(name: "ParleySDP", targets: ["ParleySDP"]),
        .library(name: "ParleyNetwork", targets: ["ParleyNetwork"]),
        .library(name: "ParleyJitter", targets: ["ParleyJitter"]),
        .library(name: "ParleyVoice", targets: ["ParleyVoice"]),
        .library(name: "ParleyEcho", targets: ["ParleyEcho"]),
        .library(name: "ParleySRTP", targets: ["ParleySRTP"]),
        .library(name: "ParleyICE", targets: ["ParleyICE"]),
        .library(name: "ParleyDTLS", targets: ["ParleyDTLS"]),
        .library(name: "ParleySCTP", targets: ["ParleySCTP"]),
        .library(name: "ParleyWebRTC", targets: ["ParleyWebRTC"]),
        .library(name: "ParleyDetect", targets: ["ParleyDetect"]),
        .library(name: "ParleyCall", targets: ["ParleyCall"]),
        .library(name: "ParleySimulation", targets: ["ParleySimulation"]),
        .library(name: "ParleyJanus", targets: ["ParleyJanus"]),
        .library(name: "ParleyRooms", targets: ["ParleyRooms"]),
        .executable(name: "parley", targets: ["parley"]),
        .executable(name: "parley-bench", targets: ["parley-bench"]),
    ],
    targets: [
        // MARK: C system libraries. Each module map's header also holds the typed, prefixed
        // `static inline` shims for the entry points Swift cannot call (variadic ctls, macros).
        .systemLibrary(name: "COpus", pkgConfig: "opus",
                       providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx",
                       providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        // The clocked test PCM behind ALSACapture.clocked / ALSAPlayback.clocked: an alsa-lib
        // ioplug plugin, compiled once here instead of living in CALSA's header.
        .target(name: "CALSAClockedPCM", linkerSettings: [.linkedLibrary("asound")]),
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2",
                       providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        // No pkgConfig: the headers sit in the multiarch include directory, searched by default.
        // Not linked: the shim loads the libraries (dlopen) the first time a file needs them.
        .systemLibrary(name: "CFFmpeg",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])]),
        // No pkgConfig: nice.pc adds -pthread, a flag SwiftPM rejects, and GLib's include paths;
        // the shim declares the GLib and libnice entry points it uses.
        .systemLibrary(name: "CNice", providers: [.apt(["libnice-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2",
                       providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "CDTLS", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        // No pkgConfig: its .pc file adds -D flags SwiftPM rejects, and the shim declares the C
        // entry points used (the AEC behind ParleyEcho; the VAD, a benchmark baseline).
        .systemLibrary(name: "CWebRTCAudioProcessing", providers: [.apt(["libwebrtc-audio-processing-dev"])]),
        // No pkgConfig: usrsctp.pc adds -D flags SwiftPM rejects, and the header needs none of them.
        .systemLibrary(name: "CUSRSCTP", providers: [.apt(["libusrsctp-dev"])]),

        // MARK: Pure-Swift core: no C imports.
        .target(name: "ParleyCore", swiftSettings: swiftSettings),
        .target(name: "ParleyRTP", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),
        .target(name: "ParleyJitter", dependencies: ["ParleyCore", "ParleyRTP"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyVoice", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),
        .target(name: "ParleySDP", dependencies: ["ParleyRTP"], swiftSettings: swiftSettings),
        // The packet-transport seam (PacketTransport) and UDPTransport: what every pipeline and
        // the SRTP and simulated transports share, without any C library but the system's.
        .target(name: "ParleyNetwork", dependencies: ["ParleyCore", "ParleyRTP"], swiftSettings: swiftSettings),

        // MARK: Wrappers over C libraries.
        // Echo cancellation of the capture against the playout (WebRTC's AEC), the bulk delay, and
        // the far-end and double-talk state of each frame.
        .target(name: "ParleyEcho", dependencies: ["CWebRTCAudioProcessing"], swiftSettings: swiftSettings),
        .target(name: "ParleyCodecs", dependencies: ["ParleyCore", "COpus", "CVPX"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyMedia", dependencies: ["ParleyCore", "CSndFile", "CFFmpeg"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyDevices", dependencies: ["ParleyCore", "ParleyMedia", "CALSA", "CALSAClockedPCM", "CV4L2"],
                swiftSettings: swiftSettings),
        .target(name: "ParleySRTP", dependencies: ["ParleyCore", "ParleyRTP", "ParleySDP", "ParleyNetwork", "CSRTP"],
                swiftSettings: swiftSettings),
        // ICE (RFC 8445) for WebRTC transports: libnice's agent on a thread of its own.
        .target(name: "ParleyICE", dependencies: ["ParleyCore", "ParleySDP", "CNice"], swiftSettings: swiftSettings),
        // DTLS 1.2 (OpenSSL) for DTLS-SRTP and data channels: datagrams in and out, no socket.
        .target(name: "ParleyDTLS", dependencies: ["ParleyCore", "ParleySDP", "ParleySRTP", "CDTLS"], swiftSettings: swiftSettings),
        // Data channels: SCTP (usrsctp, no threads of its own) over DTLS, DCEP (RFC 8832).
        .target(name: "ParleySCTP", dependencies: ["ParleyCore", "CUSRSCTP"], swiftSettings: swiftSettings),
        // The WebRTC transport: ICE's path, DTLS-SRTP's keys, SRTP's media, RFC 7983's demultiplexing,
        // and the data channels.
        .target(name: "ParleyWebRTC",
                dependencies: ["ParleyCore", "ParleyRTP", "ParleySDP", "ParleyNetwork", "ParleySRTP", "ParleyICE", "ParleyDTLS",
                               "ParleySCTP"],
                swiftSettings: swiftSettings),

        // MARK: Offline talk detection over recordings: files in, talks and statistics out.
        .target(name: "ParleyDetect", dependencies: ["ParleyMedia", "ParleyVoice", "ParleyRTP", "ParleyJitter", "ParleyCodecs", "ParleyCall"],
                swiftSettings: swiftSettings),

        // MARK: The call: pipelines, participants, events.
        .target(name: "ParleyCall",
                dependencies: ["ParleyCore", "ParleyCodecs", "ParleyRTP", "ParleyJitter", "ParleyVoice", "ParleyNetwork", "ParleyEcho"],
                swiftSettings: swiftSettings),

        // MARK: Rooms on a Janus media server: the client of its HTTP API (Foundation's URLSession).
        .target(name: "ParleyJanus", swiftSettings: swiftSettings),

        // MARK: A participant in a Janus room: joining, publishing and receiving through a call
        // session, mute, the room's notes, leaving.
        .target(name: "ParleyRooms",
                dependencies: ["ParleyCore", "ParleyDevices", "ParleyRTP", "ParleySDP", "ParleySRTP", "ParleyDTLS", "ParleyWebRTC",
                               "ParleyCall", "ParleyJanus"],
                swiftSettings: swiftSettings),

        // MARK: Simulation: the network simulator and its scenarios, traces and their replay against
        // the fixed-delay oracle, the simulated link, drifting capture clocks and the simulated room.
        // Only front ends, benchmarks and tests depend on it.
        .target(name: "ParleySimulation",
                dependencies: ["ParleyCore", "ParleyMedia", "ParleyRTP", "ParleyJitter", "ParleyVoice", "ParleyDetect",
                               "ParleyNetwork", "ParleyCall"],
                swiftSettings: swiftSettings),

        // MARK: Front ends: argument parsing and output formats only.
        .executableTarget(name: "parley",
                          dependencies: ["ParleyCore", "ParleyCodecs", "ParleyMedia", "ParleyDevices",
                                         "ParleyRTP", "ParleySDP", "ParleyNetwork", "ParleyJitter", "ParleyVoice", "ParleySRTP", "ParleyDTLS",
                                         "ParleyWebRTC", "ParleyDetect", "ParleyCall",
                                         "ParleySimulation", "ParleyJanus", "ParleyRooms", "ParleyEcho"],
                          swiftSettings: swiftSettings),

        // MARK: Examples: compiled with everything else, so they keep up with the API.
        .executableTarget(name: "call-client", dependencies: ["ParleyCore", "ParleyDevices", "ParleyCall"],
                          path: "Examples/CallClient", swiftSettings: swiftSettings),
        .executableTarget(name: "join-room", dependencies: ["ParleyCore", "ParleyDevices", "ParleyCall", "ParleyRooms"],
                          path: "Examples/JoinRoom", swiftSettings: swiftSettings),

        // MARK: Benchmarks. Baselines (WebRTC's VAD, speexdsp's jitter buffer and echo canceller) are benchmark-only dependencies.
        .systemLibrary(name: "CSpeexDSP", path: "Benchmarks/CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CSoxr", path: "Benchmarks/CSoxr", pkgConfig: "soxr",
                       providers: [.apt(["libsoxr-dev"])]),
        // Counts the process's heap allocations (interposes malloc) for the allocs/op column.
        .target(name: "CAllocCounter", path: "Benchmarks/CAllocCounter"),
        .executableTarget(name: "parley-bench",
                          dependencies: ["ParleyCore", "ParleyCodecs", "ParleyMedia", "ParleyDevices",
                                         "ParleyRTP", "ParleyJitter", "ParleyVoice", "ParleyDetect", "ParleyCall", "ParleySRTP",
                                         "ParleyDTLS", "ParleySCTP", "ParleySimulation",
                                         "COpus", "CVPX", "CALSA", "CSRTP", "CWebRTCAudioProcessing", "CSpeexDSP", "ParleyEcho", "CSoxr", "CAllocCounter"],
                          path: "Benchmarks/ParleyBench",
                          swiftSettings: swiftSettings),

        // Dev-only: dumps the VAD's features and probabilities for training and evaluation.
        .executableTarget(name: "parley-vadtool", dependencies: ["ParleyMedia", "ParleyVoice"], path: "Tools/VADTool",
                          swiftSettings: swiftSettings),

        // MARK: Tests (Swift Testing).
        .testTarget(name: "ParleyCoreTests", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyCodecsTests", dependencies: ["ParleyCodecs", "ParleyMedia", "COpus", "CVPX"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyMediaTests", dependencies: ["ParleyMedia"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyDevicesTests", dependencies: ["ParleyDevices", "ParleyMedia", "CV4L2"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyRTPTests", dependencies: ["ParleyRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyNetworkTests", dependencies: ["ParleyNetwork"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleySDPTests", dependencies: ["ParleySDP", "ParleySRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleySRTPTests", dependencies: ["ParleySRTP", "ParleyRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyICETests", dependencies: ["ParleyICE", "ParleySDP", "ParleyCore"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyWebRTCTests",
                    dependencies: ["ParleyWebRTC", "ParleyCall", "ParleyCore", "ParleyDTLS", "ParleyDevices", "ParleyRTP", "ParleySDP",
                                   "ParleySCTP"],
                    exclude: ["Peers"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleySCTPTests", dependencies: ["ParleySCTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyDTLSTests", dependencies: ["ParleyDTLS", "ParleyCore", "ParleySDP", "ParleySRTP", "ParleyRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyJitterTests", dependencies: ["ParleyJitter", "ParleyCodecs", "ParleyRTP", "ParleySimulation"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyVoiceTests", dependencies: ["ParleyVoice", "ParleyMedia"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyEchoTests", dependencies: ["ParleyEcho", "ParleyVoice", "ParleyMedia", "ParleySimulation", "ParleyCall",
                                                          "ParleyCore"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyDetectTests", dependencies: ["ParleyDetect", "ParleyMedia", "ParleyVoice", "ParleyCodecs"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyCallTests",
                    dependencies: ["ParleyCall", "ParleyCodecs", "ParleyDetect", "ParleyDevices", "ParleyJitter", "ParleyMedia",
                                   "ParleyRTP", "ParleySRTP", "ParleySimulation", "ParleyVoice", "ParleyEcho", "ParleyCore", "ParleyNetwork"],
                    exclude: ["Fixtures"],
                    swiftSettings: swiftSettings),
        // A Janus server for the tests that need one (started per test, stopped by process id).
        .target(name: "JanusTestSupport", path: "Tests/JanusTestSupport", swiftSettings: swiftSettings),
        .testTarget(name: "ParleyRoomsTests",
                    dependencies: ["ParleyRooms", "ParleyJanus", "ParleyCall", "ParleyCore", "ParleyDevices", "JanusTestSupport"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyJanusTests", dependencies: ["ParleyCore", "ParleyJanus", "ParleySDP", "ParleyICE", "JanusTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyCore", "ParleyMedia", "ParleyCodecs", "ParleyJanus", "JanusTestSupport"], swiftSettings: swiftSettings),
    ]
)
