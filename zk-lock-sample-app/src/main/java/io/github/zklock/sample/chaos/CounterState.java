package io.github.zklock.sample.chaos;

/**
 * The committed state of a counter, read in one statement.
 *
 * @param name the counter's name
 * @param value the counter's value, 0 when it has no row yet
 * @param ops how many increments of it are recorded in {@code chaos_counter_op}
 */
public record CounterState(String name, long value, long ops) {
}
