/// Benchmarks for the media suite.
func mediaBenchmarks() -> [Benchmark] {
    []
}
