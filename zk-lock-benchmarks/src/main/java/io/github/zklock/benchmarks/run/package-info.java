/**
 * The benchmark runner behind {@code ./bench.sh}: JMH rounds, request counting, the memory and
 * znode scenario, and the report ({@code RATIO} and {@code REQUESTS} lines).
 */
package io.github.zklock.benchmarks.run;
