// ParleyCodecs: Opus (libopus) and VP8/VP9 (libvpx) behind owning Swift types.
// See README.md for the module map. Clients need not import ParleyCore separately.
@_exported import ParleyCore
