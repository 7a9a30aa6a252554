package io.github.zklock.curator;

import java.time.Duration;
import java.util.Objects;

/**
 * Whether a {@link CuratorLockRegistry} keeps the znode of an exclusive key after the last local
 * grant on it ends, and for how long: the key is then <em>kept</em> (owned by this application,
 * held by nobody), and the next request of this application for it is granted on the same znode
 * without a ZooKeeper write, as a local hand-off is (see {@link LocalHandoff}). Applies to
 * EXCLUSIVE (reentrant) and WRITE grants, whose znodes this application creates with {@code keep-}
 * in their names ({@code _c_<guid>-keep-lock-0000000042}) so that other participants can tell a
 * znode that may be kept; Curator's recipes order them as any other.
 *
 * <p>A kept znode is deleted (given up) as soon as another participant queues behind it (the
 * children watch that local hand-off keeps tells), when it has been idle for {@code maxIdle}, when
 * more than {@code maxKeys} keys are kept (the least recently used first), on a revocation, when
 * the session is lost (then nothing is sent: the znode went with it), and when the registry is
 * closed. A request granted on a kept znode follows the rules of a hand-over: the session
 * connected and unchanged, and an answer of the server on it within half the negotiated session
 * timeout; past that, one {@code exists} of the znode (a read) confirms it first.
 *
 * <p>The scheme is the lock caching of cluster file systems' lock managers (GFS2's glocks, OCFS2's
 * and the VMS distributed lock manager's locks stay with the node that used them last until
 * another node asks for them).
 *
 * @param enabled whether requests keep their znodes unless they say otherwise
 * ({@link io.github.zklock.LockRequest#withKeep(Boolean)})
 * @param maxIdle how long a kept znode may stay unused before it is given up; positive
 * @param maxKeys the most keys kept at once; at least 1
 * @param giveUpWait how long a one-attempt request of this application (wait time zero,
 * {@code tryLock()}, {@code OnBusy.SKIP} with no wait) whose only obstacle is a znode that another
 * application may keep waits for it to be given up before it answers busy; applies whether or not
 * this application keeps znodes itself; positive
 */
public record KeptLocks(boolean enabled, Duration maxIdle, int maxKeys, Duration giveUpWait) {

	/** The default longest idle time of a kept znode. */
	public static final Duration DEFAULT_MAX_IDLE = Duration.ofSeconds(30);

	/** The default bound on the number of keys kept at once. */
	public static final int DEFAULT_MAX_KEYS = 1_000;

	/** The default wait of a one-attempt request for another application's kept znode to be given up. */
	public static final Duration DEFAULT_GIVE_UP_WAIT = Duration.ofMillis(200);

	/** Kept locks off (the default of a registry): a key's znode is deleted when its last local grant ends. */
	public static final KeptLocks DISABLED = new KeptLocks(false, DEFAULT_MAX_IDLE, DEFAULT_MAX_KEYS,
			DEFAULT_GIVE_UP_WAIT);

	/** Kept locks on with the default bounds. */
	public static final KeptLocks ENABLED = new KeptLocks(true, DEFAULT_MAX_IDLE, DEFAULT_MAX_KEYS,
			DEFAULT_GIVE_UP_WAIT);

	/**
	 * @throws IllegalArgumentException if {@code maxIdle} is not positive or {@code maxKeys} is
	 * below 1, or {@code giveUpWait} is not positive
	 * @throws NullPointerException if {@code maxIdle} or {@code giveUpWait} is {@code null}
	 */
	public KeptLocks {
		Objects.requireNonNull(maxIdle, "maxIdle must not be null");
		Objects.requireNonNull(giveUpWait, "giveUpWait must not be null");
		if (giveUpWait.isNegative() || giveUpWait.isZero()) {
			throw new IllegalArgumentException("giveUpWait must be positive, was " + giveUpWait);
		}
		if (maxIdle.isNegative() || maxIdle.isZero()) {
			throw new IllegalArgumentException("maxIdle must be positive, was " + maxIdle);
		}
		if (maxKeys < 1) {
			throw new IllegalArgumentException("maxKeys must be at least 1, was " + maxKeys);
		}
	}

}
