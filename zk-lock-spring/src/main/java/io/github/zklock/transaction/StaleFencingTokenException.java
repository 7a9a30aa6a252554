package io.github.zklock.transaction;

import java.util.OptionalLong;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;

/**
 * Thrown by {@link JdbcLockFence#advance} (and signalled by {@link R2dbcLockFence#advance}) when the store has already seen a higher fencing token
 * for the key than the grant's: a newer holder of the lock has written, so this grant is stale (a
 * "zombie" whose session ended while it was paused) and its write must not happen. It is a
 * {@link LockLostException}, unchecked, so the caller's transaction rolls back when it propagates
 * out of a {@code @Transactional} method or a {@code TransactionTemplate} callback.
 */
public class StaleFencingTokenException extends LockLostException {

	private static final long serialVersionUID = 1L;

	private final Object key;

	private final long fencingToken;

	private final long highestToken;

	/**
	 * Create an exception for a rejected token.
	 * @param grant the stale grant (the part of a multi-lock whose token was rejected)
	 * @param key the key of the fenced row: the lock path in a fence table, the guarded row's key
	 * otherwise
	 * @param fencingToken the rejected token, the grant's
	 * @param highestToken the token the store holds for the key, as the transaction read it, or
	 * {@code null} if it read none (a {@code NULL} column: only when something other than the
	 * fence writes that column concurrently)
	 */
	public StaleFencingTokenException(LockHandle grant, Object key, long fencingToken,
			@Nullable Long highestToken) {
		super(grant.path(), grant.mode(), "the store rejected its fencing token " + fencingToken + " for key '" + key
				+ "': " + ((highestToken != null) ? "it has seen token " + highestToken : "it holds no token")
				+ " from a newer holder of the lock");
		this.key = key;
		this.fencingToken = fencingToken;
		this.highestToken = (highestToken != null) ? highestToken : -1;
	}

	/**
	 * Return the key of the fenced row: the lock path for a fence table, the guarded row's key
	 * value otherwise.
	 * @return the key
	 */
	public Object getKey() {
		return this.key;
	}

	/**
	 * Return the rejected fencing token, the stale grant's.
	 * @return the token
	 */
	public long getFencingToken() {
		return this.fencingToken;
	}

	/**
	 * Return the highest token the store holds for the key, as the rejecting transaction read it
	 * right after the rejection: higher than {@link #getFencingToken()}. Empty only if the column
	 * was {@code NULL} at that read, which happens only when something other than the fence
	 * writes it concurrently.
	 * @return the stored token, or empty if none could be read
	 */
	public OptionalLong getHighestToken() {
		return (this.highestToken >= 0) ? OptionalLong.of(this.highestToken) : OptionalLong.empty();
	}

}
