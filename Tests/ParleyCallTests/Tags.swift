import Testing

extension Tag {
    /// Tests that run in wall-clock time: processes and devices paced by real clocks, real
    /// sockets, media servers and GStreamer/ffmpeg peers. They run in a pass of their own
    /// (scripts/test.sh), not beside the rest of the suite, which would starve them of CPU.
    @Tag static var realTime: Self
}
