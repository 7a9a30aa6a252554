package io.github.zklock.sample.chaos;

/**
 * Thrown by {@link TransferService#transfer} when an account has no row: nothing was moved, the
 * transaction rolled back. Accounts are opened by {@link TransferService#open}.
 */
public class UnknownAccountException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final int account;

	/**
	 * Create an exception.
	 * @param account the unknown account
	 */
	public UnknownAccountException(int account) {
		super("Unknown account " + account);
		this.account = account;
	}

	/**
	 * Return the unknown account.
	 * @return the account id
	 */
	public int getAccount() {
		return this.account;
	}

}
