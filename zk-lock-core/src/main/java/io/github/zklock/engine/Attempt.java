package io.github.zklock.engine;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;

/**
 * What an acquisition came to: a grant, or a lock that stayed busy for the whole wait time (which
 * key, and why), from which the template makes a skip, an empty result or a
 * {@link LockAcquisitionException}, as the verb asks.
 */
public final class Attempt {

	private static final Runnable NO_SCOPE = () -> {
	};

	private final @Nullable AsyncLockHandle granted;

	private final @Nullable Grant grant;

	private final @Nullable String busyPath;

	private final @Nullable LockMode mode;

	private final @Nullable Duration waitTime;

	private final @Nullable String reason;

	private Attempt(@Nullable AsyncLockHandle granted, @Nullable Grant grant, @Nullable String busyPath,
			@Nullable LockMode mode, @Nullable Duration waitTime, @Nullable String reason) {
		this.granted = granted;
		this.grant = grant;
		this.busyPath = busyPath;
		this.mode = mode;
		this.waitTime = waitTime;
		this.reason = reason;
	}

	/** A grant, handed to the caller as it is. */
	static Attempt granted(Grant grant) {
		return new Attempt(grant, grant, null, null, null, null);
	}

	/** A grant made on a grant thread, handed to the caller as the thread's view of it. */
	static Attempt granted(AsyncLockHandle handle, Grant grant) {
		return new Attempt(handle, grant, null, null, null, null);
	}

	static Attempt busy(String lockPath, LockMode mode, Duration waitTime, String reason) {
		return new Attempt(null, null, lockPath, mode, waitTime, reason);
	}

	/**
	 * Return the grant.
	 * @return the grant, or {@code null} when the lock was busy
	 */
	public @Nullable LockHandle granted() {
		return this.granted;
	}

	/**
	 * Return the grant of an asynchronous acquisition (any grant may be released from any thread
	 * that may release it without waiting).
	 * @return the grant, or {@code null} when the lock was busy
	 */
	public @Nullable AsyncLockHandle asyncGranted() {
		return this.granted;
	}

	/** The engine's grant behind the handle, {@code null} when the lock was busy. */
	@Nullable Grant grant() {
		return this.grant;
	}

	/**
	 * Open the hold observations' scopes of the grant on this thread, for the duration of a
	 * callback.
	 * @return what closes them (nothing to close when nothing is observed)
	 */
	public Runnable openScope() {
		Grant current = this.grant;
		return (current != null) ? current.openScope() : NO_SCOPE;
	}

	/**
	 * Return the exception that reports the busy lock, a new one on each call.
	 * @return the exception, naming the busy key's lock path, the mode, the wait time and the reason
	 * @throws IllegalStateException if the lock was granted
	 */
	public LockAcquisitionException busy() {
		if (this.granted != null || this.busyPath == null || this.mode == null || this.waitTime == null
				|| this.reason == null) {
			throw new IllegalStateException("The lock was granted: " + this.granted);
		}
		return new LockAcquisitionException(this.busyPath, this.mode, this.waitTime, this.reason);
	}

	/**
	 * Describe the busy lock for a log line.
	 * @return the mode, path, wait time and reason
	 */
	public String describeBusy() {
		return this.mode + " lock '" + this.busyPath + "' busy for " + this.waitTime + " (" + this.reason + ")";
	}

}
