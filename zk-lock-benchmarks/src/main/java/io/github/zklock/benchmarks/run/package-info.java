/**
 * The benchmark runner behind {@code ./bench.sh}: JMH rounds, request counting, the memory and
 * znode scenario, the hot-key scenario (three JVMs on one key, against raw Curator and Redisson),
 * and the report ({@code HOTKEY}, {@code RATIO} and {@code REQUESTS} lines).
 */
package io.github.zklock.benchmarks.run;
