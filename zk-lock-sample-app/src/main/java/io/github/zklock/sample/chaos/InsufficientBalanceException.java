package io.github.zklock.sample.chaos;

/**
 * Thrown by {@link TransferService#transfer} when the account to debit has less than the amount:
 * nothing was moved, the transaction rolled back (the fences it advanced included).
 */
public class InsufficientBalanceException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final int account;

	private final long balance;

	private final long amount;

	/**
	 * Create an exception.
	 * @param account the account to debit
	 * @param balance its balance
	 * @param amount the amount asked for
	 */
	public InsufficientBalanceException(int account, long balance, long amount) {
		super("Cannot move " + amount + " from account " + account + ": its balance is " + balance);
		this.account = account;
		this.balance = balance;
		this.amount = amount;
	}

	/**
	 * Return the account to debit.
	 * @return the account id
	 */
	public int getAccount() {
		return this.account;
	}

	/**
	 * Return the balance the transfer read.
	 * @return the balance
	 */
	public long getBalance() {
		return this.balance;
	}

	/**
	 * Return the amount asked for.
	 * @return the amount
	 */
	public long getAmount() {
		return this.amount;
	}

}
