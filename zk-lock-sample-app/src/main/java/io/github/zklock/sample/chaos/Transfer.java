package io.github.zklock.sample.chaos;

/**
 * A committed transfer between two accounts, as recorded in {@code chaos_transfer} and answered by
 * {@code POST /chaos/transfer}.
 *
 * @param op the caller's operation id
 * @param from the account debited
 * @param to the account credited
 * @param amount the amount moved, positive
 * @param fromBalance the balance the transfer wrote to {@code from}
 * @param toBalance the balance the transfer wrote to {@code to}
 * @param fromToken the fencing token of the grant of {@code from}'s key
 * @param toToken the fencing token of the grant of {@code to}'s key
 * @param instance the application instance that made it
 */
public record Transfer(String op, int from, int to, long amount, long fromBalance, long toBalance, long fromToken,
		long toToken, String instance) {
}
