package io.github.zklock.curator;

import java.util.concurrent.atomic.AtomicReference;

import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.annotation.LockMode;

/**
 * A grant from {@link CuratorLockRegistry}. Its state follows the ZooKeeper connection (see
 * {@link HeldLocks}); the fencing token is read from the server on first request only.
 */
final class CuratorLockHandle implements LockHandle {

	/** Where a grant stands. */
	enum State {

		/** Granted, connection up. */
		HELD,

		/** Connection suspended: another client may be granted the lock if the session expires. */
		IN_DOUBT,

		/** Session lost: the lock znode is gone, another client may hold the lock. */
		LOST,

		/** Released by its holder. */
		RELEASED

	}

	private final CuratorLockRegistry registry;

	private final RecipeCache.Entry entry;

	private final LockRecipe.Grant grant;

	private final String path;

	private final LockMode mode;

	private final @Nullable Thread owner;

	private final long sessionInstance;

	private final AtomicReference<State> state = new AtomicReference<>(State.HELD);

	private volatile long fencingToken;

	CuratorLockHandle(CuratorLockRegistry registry, RecipeCache.Entry entry, LockRecipe.Grant grant, String path,
			LockMode mode, long sessionInstance) {
		this.registry = registry;
		this.entry = entry;
		this.grant = grant;
		this.path = path;
		this.mode = mode;
		this.owner = entry.kind().threadBound() ? Thread.currentThread() : null;
		this.sessionInstance = sessionInstance;
	}

	@Override
	public String path() {
		return this.path;
	}

	@Override
	public LockMode mode() {
		return this.mode;
	}

	/**
	 * Return the znode this grant created (or re-entered), below {@link #path()}.
	 * @return the lock znode path
	 */
	String nodePath() {
		return this.grant.nodePath();
	}

	/** The Curator ZooKeeper handle instance (and so the session) the grant was made in. */
	long sessionInstance() {
		return this.sessionInstance;
	}

	State state() {
		return this.state.get();
	}

	@Override
	public boolean isHeld() {
		return this.state.get() == State.HELD;
	}

	@Override
	public void checkHeld() {
		switch (this.state.get()) {
			case HELD -> {
			}
			case IN_DOUBT -> throw new LockLostException(this.path, this.mode,
					"the ZooKeeper connection is suspended; the lock is in doubt until it reconnects");
			case LOST -> throw new LockLostException(this.path, this.mode,
					"the ZooKeeper session was lost; another client may hold the lock");
			case RELEASED -> throw new IllegalStateException(
					this.mode + " lock '" + this.path + "' was already released");
		}
	}

	@Override
	public long fencingToken() {
		checkHeld();
		long token = this.fencingToken;
		if (token != 0) {
			return token;
		}
		Stat stat;
		try {
			stat = this.registry.client().checkExists().forPath(this.grant.nodePath());
		}
		catch (Exception ex) {
			throw CuratorLockRegistry.translate(ex, "read the fencing token of", this.path, this.mode,
					this.registry.client());
		}
		if (stat == null) {
			throw new LockLostException(this.path, this.mode,
					"its znode " + this.grant.nodePath() + " no longer exists");
		}
		token = stat.getCzxid();
		this.fencingToken = token;
		return token;
	}

	@Override
	public void release() {
		if (this.state.get() == State.RELEASED) {
			return;
		}
		if (this.owner != null && this.owner != Thread.currentThread()) {
			throw new IllegalStateException(this.mode + " lock '" + this.path + "' was acquired by thread '"
					+ this.owner.getName() + "' and must be released by it, not by '"
					+ Thread.currentThread().getName() + "'");
		}
		if (this.state.getAndSet(State.RELEASED) != State.RELEASED) {
			this.registry.release(this, this.entry, this.grant);
		}
	}

	/** Connection suspended: held grants become in doubt. */
	void suspend() {
		this.state.compareAndSet(State.HELD, State.IN_DOUBT);
	}

	/** Reconnected with the session that created the lock znode: the grant holds again. */
	void regain() {
		this.state.compareAndSet(State.IN_DOUBT, State.HELD);
	}

	/** Session lost or replaced: the grant is gone for good. */
	void lose() {
		this.state.updateAndGet((current) -> (current == State.RELEASED) ? current : State.LOST);
	}

	@Override
	public String toString() {
		return this.mode + " lock '" + this.path + "' (" + this.grant.nodePath() + ", " + this.state.get() + ")";
	}


}
