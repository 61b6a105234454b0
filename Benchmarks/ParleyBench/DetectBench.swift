/// Benchmarks for the detect suite.
func detectBenchmarks() -> [Benchmark] {
    []
}
