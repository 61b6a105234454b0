/// Benchmarks for the codec suite.
func codecBenchmarks() -> [Benchmark] {
    []
}
