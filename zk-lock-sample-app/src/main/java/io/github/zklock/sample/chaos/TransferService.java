package io.github.zklock.sample.chaos;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.springframework.context.annotation.Profile;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.Assert;

import io.github.zklock.LockAssert;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.sample.SampleProperties;
import io.github.zklock.transaction.JdbcLockFence;
import io.github.zklock.transaction.StaleFencingTokenException;

/**
 * Accounts 0 to N-1 and transfers between two of them, each a deliberate read-then-write of both
 * balances under a multi-lock of both accounts' keys ({@code /chaos/account/<id>}: taken in one
 * canonical order, all or nothing, one wait budget), each account row fenced by its own key's
 * token ({@link JdbcLockFence} on {@code chaos_account.fencing_token}). The sum of the balances is
 * constant and no balance goes below zero unless a zombie's transfer got through.
 */
@Service
@Profile(ChaosConfiguration.PROFILE)
public class TransferService {

	/** The lock key of an account is this prefix and its id. */
	public static final String LOCK_PREFIX = "/chaos/account/";

	private final AccountRepository accounts;

	private final JdbcLockFence fence;

	private final String instanceId;

	private final Duration thinkTime;

	/**
	 * Create the service.
	 * @param accounts the account tables
	 * @param dataSource the shared database, for the fence
	 * @param sample the instance id
	 * @param chaos the think time
	 */
	public TransferService(AccountRepository accounts, DataSource dataSource, SampleProperties sample,
			ChaosProperties chaos) {
		this.accounts = accounts;
		this.fence = JdbcLockFence.guardedRows(dataSource, "chaos_account", "id", "fencing_token");
		this.instanceId = sample.getInstanceId();
		this.thinkTime = chaos.getThinkTime();
	}

	/**
	 * Open the accounts 0 to {@code count - 1}, without locks: call it from one caller before the
	 * transfers start. Accounts that exist keep their balance, unless {@code reset} is given.
	 * @param count how many accounts, at least 1
	 * @param balance the balance of each account opened, at least 0
	 * @param reset whether to start over: every account below {@code count} gets {@code balance},
	 * the accounts above are removed, and so is every recorded transfer (the fences are kept)
	 * @return how many accounts were added, and the accounts' state after
	 * @throws IllegalArgumentException if {@code count} is below 1 or {@code balance} below 0
	 * @throws org.springframework.dao.DuplicateKeyException if another caller opened the same account
	 * at the same time (rolled back)
	 */
	@Transactional
	public OpenedAccounts open(int count, long balance, boolean reset) {
		Assert.isTrue(count > 0, () -> "count must be at least 1, was " + count);
		Assert.isTrue(balance >= 0, () -> "balance must not be negative, was " + balance);
		if (reset) {
			this.accounts.deleteTransfers();
			this.accounts.reset(count, balance);
		}
		int created = 0;
		for (int id = 0; id < count; id++) {
			if (this.accounts.insertIfAbsent(id, balance)) {
				created++;
			}
		}
		AccountsState state = this.accounts.state();
		return new OpenedAccounts(created, state.count(), state.sum(), state.minBalance(), state.transfers());
	}

	/**
	 * Move {@code amount} from one account to another under the multi-lock of both, fenced on both
	 * rows, if the balance of {@code from} allows it.
	 * @param from the account to debit
	 * @param to the account to credit, not {@code from}
	 * @param amount the amount, positive
	 * @param op the caller's operation id, recorded with the transfer
	 * @return the committed transfer
	 * @throws InsufficientBalanceException if {@code from} has less than {@code amount} (rolled
	 * back, nothing written)
	 * @throws UnknownAccountException if an account has no row (rolled back)
	 * @throws IllegalArgumentException if {@code from} equals {@code to} or {@code amount} is not
	 * positive (rolled back, nothing written)
	 * @throws io.github.zklock.LockAcquisitionException if a key was not granted within the wait
	 * time (keys already taken were released; the method did not run)
	 * @throws StaleFencingTokenException if a newer grant has written an account: this holder is a
	 * zombie (rolled back)
	 * @throws io.github.zklock.LockLostException if a grant was known lost or in doubt before the
	 * fence or at the commit guard (rolled back)
	 * @throws io.github.zklock.LockException if ZooKeeper could not serve the locks or a token (not
	 * run, or rolled back)
	 */
	@DistributedLock(path = { "/chaos/account/#{#from}", "/chaos/account/#{#to}" })
	@Transactional
	public Transfer transfer(int from, int to, long amount, String op) {
		LockAssert.assertHeld();
		Assert.isTrue(from != to, () -> "from and to must differ, both were " + from);
		Assert.isTrue(amount > 0, () -> "amount must be positive, was " + amount);
		List<LockHandle> parts = LockContext.require().parts();
		Assert.state(parts.size() == 2, () -> "Expected one grant per account, got " + parts.size());
		long fromToken = 0;
		long toToken = 0;
		// Fence first, then read; and in the parts' order (sorted lock paths), so that two transfers
		// lock the two rows in one order.
		for (LockHandle part : parts) {
			int account = part.path().endsWith(LOCK_PREFIX + from) ? from : to;
			long token = fence(part, account);
			if (account == from) {
				fromToken = token;
			}
			else {
				toToken = token;
			}
		}
		long fromBalance = balance(from);
		long toBalance = balance(to);
		if (fromBalance < amount) {
			throw new InsufficientBalanceException(from, fromBalance, amount);
		}
		ThinkTime.park(this.thinkTime, "moving " + amount + " from " + from + " to " + to);
		Transfer transfer = new Transfer(op, from, to, amount, fromBalance - amount, toBalance + amount, fromToken,
				toToken, this.instanceId);
		this.accounts.updateBalance(from, transfer.fromBalance());
		this.accounts.updateBalance(to, transfer.toBalance());
		this.accounts.insertTransfer(transfer);
		return transfer;
	}

	/**
	 * Read the accounts' committed state, without a lock.
	 * @return their count, sum, lowest balance and the number of transfers
	 */
	public AccountsState state() {
		return this.accounts.state();
	}

	private long fence(LockHandle part, int account) {
		long token = part.fencingToken();
		try {
			this.fence.advance(part, account);
		}
		catch (EmptyResultDataAccessException ex) {
			// The fence is the account row itself: no row, no account.
			throw new UnknownAccountException(account);
		}
		return token;
	}

	private long balance(int account) {
		return this.accounts.findBalance(account).orElseThrow(() -> new UnknownAccountException(account));
	}

	/**
	 * The outcome of {@link #open}.
	 *
	 * @param created how many accounts were added
	 * @param count how many accounts there are now
	 * @param sum the sum of their balances
	 * @param minBalance the lowest balance
	 * @param transfers how many transfers are recorded
	 */
	public record OpenedAccounts(int created, long count, long sum, @Nullable Long minBalance,
			long transfers) {
	}

}
