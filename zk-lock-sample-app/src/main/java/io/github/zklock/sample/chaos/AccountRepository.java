package io.github.zklock.sample.chaos;

import java.util.Optional;

import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Plain JDBC access to the accounts ({@code chaos_account}) and the transfers
 * ({@code chaos_transfer}), see {@code chaos-schema.sql}. Each method is one statement with no
 * locking of its own; {@link TransferService} serializes the writers of an account. The account
 * row's {@code fencing_token} is written by the fence only.
 */
@Repository
@Profile(ChaosConfiguration.PROFILE)
public class AccountRepository {

	private final JdbcClient jdbcClient;

	/**
	 * Create a repository.
	 * @param jdbcClient the client on the application's data source
	 */
	public AccountRepository(JdbcClient jdbcClient) {
		this.jdbcClient = jdbcClient;
	}

	/**
	 * Return the balance of an account.
	 * @param id the account id
	 * @return its balance, or empty when it has no row
	 */
	public Optional<Long> findBalance(int id) {
		return this.jdbcClient.sql("SELECT balance FROM chaos_account WHERE id = :id")
			.param("id", id)
			.query(Long.class)
			.optional();
	}

	/**
	 * Overwrite the balance of an account.
	 * @param id the account id
	 * @param balance the new balance
	 */
	public void updateBalance(int id, long balance) {
		this.jdbcClient.sql("UPDATE chaos_account SET balance = :balance WHERE id = :id")
			.param("balance", balance)
			.param("id", id)
			.update();
	}

	/**
	 * Add an account unless it exists, its fence at 0.
	 * @param id the account id
	 * @param balance its balance
	 * @return whether it was added
	 */
	public boolean insertIfAbsent(int id, long balance) {
		return this.jdbcClient
			.sql("INSERT INTO chaos_account (id, balance, fencing_token) SELECT CAST(:id AS INT), "
					+ "CAST(:balance AS BIGINT), 0 WHERE NOT EXISTS (SELECT 1 FROM chaos_account WHERE id = :id)")
			.param("id", id)
			.param("balance", balance)
			.update() == 1;
	}

	/**
	 * Set the balance of every account below {@code count} and remove the others. Fences are kept,
	 * so that a grant older than one that wrote an account before the reset is still refused.
	 * @param count the number of accounts to keep: ids 0 to {@code count - 1}
	 * @param balance their balance
	 */
	public void reset(int count, long balance) {
		this.jdbcClient.sql("DELETE FROM chaos_account WHERE id < 0 OR id >= :count").param("count", count).update();
		this.jdbcClient.sql("UPDATE chaos_account SET balance = :balance").param("balance", balance).update();
	}

	/**
	 * Remove every recorded transfer.
	 */
	public void deleteTransfers() {
		this.jdbcClient.sql("DELETE FROM chaos_transfer").update();
	}

	/**
	 * Record a transfer.
	 * @param transfer the transfer
	 */
	public void insertTransfer(Transfer transfer) {
		this.jdbcClient
			.sql("INSERT INTO chaos_transfer (op, from_account, to_account, amount, from_token, to_token, "
					+ "from_balance, to_balance, instance_id) VALUES (:op, :from, :to, :amount, :fromToken, :toToken, "
					+ ":fromBalance, :toBalance, :instance)")
			.param("op", transfer.op())
			.param("from", transfer.from())
			.param("to", transfer.to())
			.param("amount", transfer.amount())
			.param("fromToken", transfer.fromToken())
			.param("toToken", transfer.toToken())
			.param("fromBalance", transfer.fromBalance())
			.param("toBalance", transfer.toBalance())
			.param("instance", transfer.instance())
			.update();
	}

	/**
	 * Read the accounts' count, sum and lowest balance and the number of transfers, in one
	 * statement (one snapshot on PostgreSQL).
	 * @return the state
	 */
	public AccountsState state() {
		return this.jdbcClient
			.sql("SELECT COUNT(*), COALESCE(SUM(balance), 0), MIN(balance), (SELECT COUNT(*) FROM chaos_transfer) "
					+ "FROM chaos_account")
			.query((rs, row) -> {
				long count = rs.getLong(1);
				long sum = rs.getLong(2);
				long min = rs.getLong(3);
				Long minBalance = rs.wasNull() ? null : min;
				return new AccountsState(count, sum, minBalance, rs.getLong(4));
			})
			.single();
	}

}
