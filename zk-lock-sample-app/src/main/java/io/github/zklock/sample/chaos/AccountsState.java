package io.github.zklock.sample.chaos;

import org.jspecify.annotations.Nullable;

/**
 * The committed state of the accounts, read in one statement.
 *
 * @param count how many accounts there are
 * @param sum the sum of their balances: constant under transfers
 * @param minBalance the lowest balance, {@code null} without accounts: never negative unless a
 * transfer overdrew
 * @param transfers how many transfers are recorded in {@code chaos_transfer}
 */
public record AccountsState(long count, long sum, @Nullable Long minBalance, long transfers) {
}
