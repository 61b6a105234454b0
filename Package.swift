// swift-tools-version: 6.0
//
// Parley: a real-time media pipeline and voice-activity-detection library for Linux.
//
// Read this file top to bottom to see the whole design:
//   C system libraries (C*)  ->  thin Swift wrappers (Codecs, Media, Devices)
//   pure-Swift core (Core, RTP, SDP, Jitter, Voice)  ->  Detect (offline talk detection)
//   ->  Call (pipelines, participants, events, the session)
//   Janus (a client of the Janus media server's HTTP API; Foundation only) stands beside them,
//   as does ICE (connectivity for WebRTC transports, over libnice).
//   ->  Rooms (a participant in a Janus VideoRoom or AudioBridge room: Janus's signalling
//       with the Janus client, the media through a Call session)
//   ->  Simulation (the network simulator, traces and their replay, the simulated link and room):
//       no other library depends on it; the front ends, benchmarks and tests do.
//   thin front ends: the `parley` CLI and the `parley-bench` benchmark executable; the examples
//   (`call-client` on Call, `join-room` on Rooms).
// Only ParleyCodecs, ParleyMedia, ParleyDevices, ParleySRTP and ParleyICE import C. Everything else builds anywhere.

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
        .library(name: "ParleyJitter", targets: ["ParleyJitter"]),
        .library(name: "ParleyVoice", targets: ["ParleyVoice"]),
        .library(name: "ParleySRTP", targets: ["ParleySRTP"]),
        .library(name: "ParleyICE", targets: ["ParleyICE"]),
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
        .systemLibrary(name: "CFFmpeg",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2",
                       providers: [.apt(["libsrtp2-dev"])]),
        // No pkgConfig: nice.pc adds -pthread, a flag SwiftPM rejects, and GLib's include paths;
        // the shim declares the GLib and libnice entry points it uses.
        .systemLibrary(name: "CNice", providers: [.apt(["libnice-dev"])]),

        // MARK: Pure-Swift core: no C imports.
        .target(name: "ParleyCore", swiftSettings: swiftSettings),
        .target(name: "ParleyRTP", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),
        .target(name: "ParleySDP", dependencies: ["ParleyRTP"], swiftSettings: swiftSettings),
        .target(name: "ParleyJitter", dependencies: ["ParleyCore", "ParleyRTP"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyVoice", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),

        // MARK: Wrappers over C libraries.
        .target(name: "ParleyCodecs", dependencies: ["ParleyCore", "COpus", "CVPX"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyMedia", dependencies: ["ParleyCore", "CSndFile", "CFFmpeg"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyDevices", dependencies: ["ParleyCore", "ParleyMedia", "CALSA", "CALSAClockedPCM", "CV4L2"],
                swiftSettings: swiftSettings),
        .target(name: "ParleySRTP", dependencies: ["ParleyCore", "ParleySDP", "CSRTP"], swiftSettings: swiftSettings),
        // ICE (RFC 8445) for WebRTC transports: libnice's agent on a thread of its own.
        .target(name: "ParleyICE", dependencies: ["ParleyCore", "CNice"], swiftSettings: swiftSettings),

        // MARK: Offline talk detection over recordings: files in, talks and statistics out.
        .target(name: "ParleyDetect", dependencies: ["ParleyCore", "ParleyMedia", "ParleyVoice"],
                swiftSettings: swiftSettings),

        // MARK: The call: pipelines, participants, events.
        .target(name: "ParleyCall",
                dependencies: ["ParleyCore", "ParleyCodecs", "ParleyMedia", "ParleyDevices",
                               "ParleyRTP", "ParleyJitter", "ParleyVoice", "ParleySRTP", "ParleyDetect"],
                swiftSettings: swiftSettings),

        // MARK: Rooms on a Janus media server: the client of its HTTP API (Foundation's URLSession).
        .target(name: "ParleyJanus", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),

        // MARK: A participant in a Janus room: joining, publishing and receiving through a call
        // session, mute, the room's notes, leaving.
        .target(name: "ParleyRooms",
                dependencies: ["ParleyCore", "ParleyDevices", "ParleyRTP", "ParleySRTP", "ParleyCall", "ParleyJanus"],
                swiftSettings: swiftSettings),

        // MARK: Simulation: the network simulator and its scenarios, traces and their replay against
        // the fixed-delay oracle, the simulated link, drifting capture clocks and the simulated room.
        // Only front ends, benchmarks and tests depend on it.
        .target(name: "ParleySimulation",
                dependencies: ["ParleyCore", "ParleyMedia", "ParleyRTP", "ParleyJitter", "ParleyVoice", "ParleyDetect",
                               "ParleyCall"],
                swiftSettings: swiftSettings),

        // MARK: Front ends: argument parsing and output formats only.
        .executableTarget(name: "parley",
                          dependencies: ["ParleyCore", "ParleyCodecs", "ParleyMedia", "ParleyDevices",
                                         "ParleyRTP", "ParleySDP", "ParleyJitter", "ParleyVoice", "ParleySRTP", "ParleyDetect", "ParleyCall",
                                         "ParleySimulation", "ParleyJanus", "ParleyRooms"],
                          swiftSettings: swiftSettings),

        // MARK: Examples: compiled with everything else, so they keep up with the API.
        .executableTarget(name: "call-client", dependencies: ["ParleyCore", "ParleyDevices", "ParleyCall"],
                          path: "Examples/CallClient", swiftSettings: swiftSettings),
        .executableTarget(name: "join-room", dependencies: ["ParleyCore", "ParleyDevices", "ParleyCall", "ParleyRooms"],
                          path: "Examples/JoinRoom", swiftSettings: swiftSettings),

        // MARK: Benchmarks. Baselines (WebRTC VAD, speexdsp) are benchmark-only dependencies.
        // No pkgConfig: its .pc file adds -D flags SwiftPM rejects, and the shim declares what it uses.
        .systemLibrary(name: "CWebRTCVAD", path: "Benchmarks/CWebRTCVAD",
                       providers: [.apt(["libwebrtc-audio-processing-dev"])]),
        .systemLibrary(name: "CSpeexDSP", path: "Benchmarks/CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CSoxr", path: "Benchmarks/CSoxr", pkgConfig: "soxr",
                       providers: [.apt(["libsoxr-dev"])]),
        // Counts the process's heap allocations (interposes malloc) for the allocs/op column.
        .target(name: "CAllocCounter", path: "Benchmarks/CAllocCounter"),
        .executableTarget(name: "parley-bench",
                          dependencies: ["ParleyCore", "ParleyCodecs", "ParleyMedia", "ParleyDevices",
                                         "ParleyRTP", "ParleyJitter", "ParleyVoice", "ParleyDetect", "ParleyCall", "ParleySRTP",
                                         "ParleySimulation",
                                         "COpus", "CVPX", "CWebRTCVAD", "CSpeexDSP", "CSoxr", "CAllocCounter"],
                          path: "Benchmarks/ParleyBench",
                          swiftSettings: swiftSettings),

        // Dev-only: dumps the VAD's features and probabilities for training and evaluation.
        .executableTarget(name: "parley-vadtool", dependencies: ["ParleyVoice"], path: "Tools/VADTool",
                          swiftSettings: swiftSettings),

        // MARK: Tests (Swift Testing).
        .testTarget(name: "ParleyCoreTests", dependencies: ["ParleyCore"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyCodecsTests", dependencies: ["ParleyCodecs", "ParleyMedia"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyMediaTests", dependencies: ["ParleyMedia"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyDevicesTests", dependencies: ["ParleyDevices", "ParleyMedia"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyRTPTests", dependencies: ["ParleyRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleySDPTests", dependencies: ["ParleySDP", "ParleySRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleySRTPTests", dependencies: ["ParleySRTP", "ParleyRTP"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyICETests", dependencies: ["ParleyICE", "ParleyCore"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyJitterTests", dependencies: ["ParleyJitter", "ParleyCodecs", "ParleyMedia", "ParleySimulation"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyVoiceTests", dependencies: ["ParleyVoice", "ParleyMedia"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyDetectTests", dependencies: ["ParleyDetect", "ParleyMedia", "ParleyVoice"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyCallTests", dependencies: ["ParleyCall", "ParleyDetect", "ParleySimulation"], exclude: ["Fixtures"],
                    swiftSettings: swiftSettings),
        // A Janus server for the tests that need one (started per test, stopped by process id).
        .target(name: "JanusTestSupport", path: "Tests/JanusTestSupport", swiftSettings: swiftSettings),
        .testTarget(name: "ParleyJanusTests", dependencies: ["ParleyJanus", "JanusTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "ParleyRoomsTests",
                    dependencies: ["ParleyRooms", "ParleyJanus", "ParleyCall", "ParleyCore", "ParleyDevices", "JanusTestSupport"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyMedia", "ParleyJanus", "JanusTestSupport"], swiftSettings: swiftSettings),
    ]
)
