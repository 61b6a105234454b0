/// Benchmarks for the rtp suite.
func rtpBenchmarks() -> [Benchmark] {
    []
}
