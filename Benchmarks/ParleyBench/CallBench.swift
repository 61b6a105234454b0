/// Benchmarks for the call suite.
func callBenchmarks() -> [Benchmark] {
    []
}
