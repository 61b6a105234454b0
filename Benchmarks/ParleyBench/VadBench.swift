/// Benchmarks for the vad suite.
func vadBenchmarks() -> [Benchmark] {
    []
}
