/// Benchmarks for the jitter suite.
func jitterBenchmarks() -> [Benchmark] {
    []
}
