/// Benchmarks for the capture suite.
func captureBenchmarks() -> [Benchmark] {
    []
}
