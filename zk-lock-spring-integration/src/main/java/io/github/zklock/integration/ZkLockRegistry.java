package io.github.zklock.integration;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.expression.PathSegmentEncoder;

/**
 * Spring Integration's {@link RenewableLockRegistry} on zk-lock: {@link #obtain(Object)} returns a
 * {@link DistributedLock} of the key, so that Spring Integration's users of a lock registry
 * ({@code LockRegistryLeaderInitiator}, {@code LockRequestHandlerAdvice}, aggregators, the
 * {@code executeLocked} methods) lock through zk-lock: same local queue, reentrancy, observations
 * and connection tracking as {@code @DistributedLock}.
 *
 * <h2>Keys and znodes</h2>
 * A lock key (any object; Spring Integration passes strings, such as a correlation id or a
 * leader role) maps to the zk-lock key {@code <keyPrefix>/<segment>}, where the segment is the
 * key's {@code toString()} {@link PathSegmentEncoder encoded} into exactly one path segment
 * ({@code /}, {@code %}, control characters and a few other ranges percent-encoded, everything
 * else kept): {@code "order/42"} becomes {@code /spring-integration/order%2F42}. The lock's znode
 * is that key below the lock registry's root path ({@code zk.lock.root-path}), for example
 * {@code /locks/spring-integration/order%2F42}, and Curator's sequential lock znodes live below
 * it. A {@code @DistributedLock(path = "/spring-integration/#{#key}")} with the same string
 * names the same lock: both encode the value the same way. The default prefix is
 * {@value #DEFAULT_KEY_PREFIX}.
 *
 * <h2>The locks</h2>
 * Each {@code Lock} takes reentrant EXCLUSIVE zk-lock grants of the key; locks of equal keys
 * from registries on the same template are equal and interchangeable (a lock taken through one
 * is released through another), and creating one sends no request, so nothing is cached here and
 * nothing needs expiring (the lock registry below keeps the state of idle keys, bounded by its
 * capacity). The methods:
 * <ul>
 * <li>{@code lock()} and {@code lock(ttl)} wait without limit and are not interruptible: an
 * interrupt while waiting is kept and restored once the lock is granted;</li>
 * <li>{@code lockInterruptibly()} waits without limit; {@code tryLock(time, unit)} and
 * {@code tryLock(waitTime, ttl)} wait at most that long ({@link LockRequest#WAIT_FOREVER},
 * {@code -1 ms}, without limit; another negative time makes one attempt) and return
 * {@code false} if another owner held the lock all that time; they throw
 * {@link InterruptedException} when interrupted, with no grant left behind;</li>
 * <li>{@code tryLock()} makes one attempt without waiting (no request at all when this thread
 * already holds the lock);</li>
 * <li>the lock is reentrant and bound to the thread that took it: each {@code lock} or
 * successful {@code tryLock} must be matched by an {@code unlock()} in the same thread, which
 * releases that thread's latest grant; {@code unlock()} in a thread holding none throws
 * {@link IllegalMonitorStateException};</li>
 * <li>{@code newCondition()} returns the distributed condition of the key, a zk-lock addition
 * shared by every application (see {@link io.github.zklock.spi.LockCondition});</li>
 * <li>when ZooKeeper cannot be reached, the methods throw {@link LockException} (an unchecked
 * exception) instead of reporting a busy lock with {@code false};</li>
 * <li>a thread whose grant was lost (with its ZooKeeper session, or ended by its time to live)
 * gets {@link LockLostException} from {@code lock} and {@code tryLock} instead of a re-entry,
 * until it has unlocked that grant.</li>
 * </ul>
 *
 * <h2>Time to live</h2>
 * A lock's time to live ({@code ttl}) is the grant's ceiling
 * ({@link LockRequest#withLockAtMostFor(Duration) lockAtMostFor}): once the lock has been held
 * that long without being renewed, this application ends the grant, even while its thread still
 * works (the grant becomes {@code LOST}, zk-lock's lost-lock listeners are told) and deletes its
 * znode, so that another application gets the lock, as when a record of Spring Integration's
 * Redis or JDBC registry expires. {@code unlock()} of a grant so ended releases it and throws
 * {@link ConcurrentModificationException}, as those registries do. A holder that dies frees the
 * lock earlier, with its ZooKeeper session.
 * <ul>
 * <li>{@code lock(ttl)} and {@code tryLock(waitTime, ttl)} give the time to live of that grant
 * (zero: none);</li>
 * <li>{@code lock()}, {@code lockInterruptibly()}, {@code tryLock()} and
 * {@code tryLock(time, unit)} take the registry's {@link #setDefaultTtl(Duration) default time to
 * live}, which is the template's default {@code lockAtMostFor}
 * ({@code zk.lock.default-lock-at-most-for}) unless set: by default none, so that a plain
 * {@code lock()} lasts until it is unlocked or its holder's session ends;</li>
 * <li>{@link #renewLock(Object, Duration)} moves the time to live of the calling thread's grants
 * of a key to that long from now, {@link #renewLock(Object)} to the default time to live;</li>
 * <li>a re-entry (a nested {@code lock} or {@code tryLock} in the thread that holds the lock)
 * renews the grants it nests in to its own time to live, as a re-entry refreshes the expiry of
 * Spring Integration's own registries' locks;</li>
 * <li>with a {@link #setRenewalTaskScheduler(TaskScheduler) renewal scheduler}, each grant with a
 * time to live is renewed every third of it while it is held, as Spring Integration's Redis
 * registry does.</li>
 * </ul>
 * Unlike those registries, a re-entry into a grant its time to live ended fails
 * ({@link LockLostException}) instead of taking the lock anew: unlock first.
 *
 * <h2>Leader election</h2>
 * {@code LockRegistryLeaderInitiator} re-locks at each heartbeat and unlocks at once, so the
 * leader holds one grant, two for an instant, never more; its final {@code unlock()} on stop
 * deletes the lock znode. The re-lock is how a leader learns that its lock is gone: after the
 * session is lost it throws {@link LockLostException} and the initiator revokes leadership.
 * Until Curator reports the loss (the connection is suspended first, and the lock in doubt)
 * re-locks still succeed, so another candidate may lead for a moment before the old leader is
 * revoked, as with any lock on ZooKeeper; work that must never overlap checks a fencing token
 * ({@link LockTemplate} grants carry one). With a default time to live, each heartbeat's re-lock
 * renews the leader's grant, so a leader whose heartbeat stops (a stuck thread) loses the lock
 * once that time has passed.
 *
 * <h2>Living with Spring Integration's own ZooKeeper registry</h2>
 * A grant is a Curator {@code InterProcessMutex} on the lock's znode, like the locks of Spring
 * Integration's {@code ZookeeperLockRegistry}, so the two exclude each other only on the same
 * znode path. By default they do not meet: that registry puts the key, unencoded, below
 * {@code /SpringIntegration-LockRegistry}, this one below {@code <root-path>/spring-integration}.
 * Applications moving from one to the other while both run can make them meet with a root path
 * of {@code /}, the key prefix {@code /SpringIntegration-LockRegistry} and keys that need no
 * encoding (no {@code /} or {@code %}).
 *
 * <p>Thread-safe; the settings may be changed while locks are in use and apply to later grants.
 */
public class ZkLockRegistry implements RenewableLockRegistry<DistributedLock> {

	/** The key prefix used when none is given. */
	public static final String DEFAULT_KEY_PREFIX = "/spring-integration";

	private final LockTemplate template;

	private final String keyPrefix;

	private volatile @Nullable Duration defaultTtl;

	private volatile @Nullable TaskScheduler renewalTaskScheduler;

	/**
	 * Create a registry whose locks live below {@value #DEFAULT_KEY_PREFIX}.
	 * @param template the template that grants the locks
	 */
	public ZkLockRegistry(LockTemplate template) {
		this(template, DEFAULT_KEY_PREFIX);
	}

	/**
	 * Create a registry whose locks live below the given key prefix.
	 * @param template the template that grants the locks
	 * @param keyPrefix a zk-lock key such as {@code /orders/aggregator} (starting with {@code /},
	 * without a trailing {@code /}), or the empty string for keys directly below the root path
	 * @throws InvalidLockPathException if the prefix is not empty and not a legal key
	 */
	public ZkLockRegistry(LockTemplate template, String keyPrefix) {
		this.template = Objects.requireNonNull(template, "template must not be null");
		Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
		if (!keyPrefix.isEmpty()) {
			// Validates without a request.
			template.getRegistry().lockPath(keyPrefix);
		}
		this.keyPrefix = keyPrefix;
	}

	/**
	 * Return the lock of a key: reentrant EXCLUSIVE zk-lock grants of
	 * {@link #keyFor(Object) keyFor(lockKey)}, with a time to live (see the class description).
	 * Sends no request; the key is checked at once.
	 * @param lockKey the key; its {@code toString()} names the lock
	 * @return the lock, equal to every other lock of an equal key from a registry on the same
	 * template
	 * @throws IllegalArgumentException if the key is {@code null}
	 * @throws InvalidLockPathException if the key's string is empty, or the lock path is too long
	 */
	@Override
	public DistributedLock obtain(Object lockKey) {
		String key = keyFor(lockKey);
		this.template.getRegistry().lockPath(key);
		return new ZkDistributedLock(this, key);
	}

	/**
	 * Renew the time to live of the lock of a key held by the calling thread to the
	 * {@link #getDefaultTtl() default time to live} from now (see
	 * {@link #renewLock(Object, Duration)}).
	 * @param lockKey the key of a lock the calling thread holds
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock
	 * @throws IllegalStateException if the lock can no longer be renewed (see
	 * {@link #renewLock(Object, Duration)}), or the registry has no default time to live: give one
	 * with {@link #setDefaultTtl(Duration)} or renew with {@link #renewLock(Object, Duration)}
	 * @throws IllegalArgumentException if the key is {@code null}
	 * @throws InvalidLockPathException if the key's string is empty, or the lock path is too long
	 */
	@Override
	public void renewLock(Object lockKey) {
		ZkDistributedLock lock = (ZkDistributedLock) obtain(lockKey);
		lock.checkHeldByCurrentThread();
		Duration ttl = getDefaultTtl();
		if (ttl.isZero()) {
			throw new IllegalStateException("Could not renew " + lock + ": " + this + " has no default time to live; "
					+ "set one with setDefaultTtl(Duration) or renew with renewLock(lockKey, ttl)");
		}
		lock.renew(ttl);
	}

	/**
	 * Renew the time to live of the lock of a key held by the calling thread: every grant the
	 * thread holds on the key (nested ones included) is ended {@code ttl} from now unless renewed
	 * again or unlocked, also a grant that had no time to live. Sends no request.
	 * @param lockKey the key of a lock the calling thread holds
	 * @param ttl the new time to live, positive
	 * @throws IllegalMonitorStateException if the calling thread does not hold the lock (Spring
	 * Integration: "the lock must be held by the current thread")
	 * @throws IllegalStateException if the lock can no longer be renewed: its time to live has
	 * passed, it was lost with its ZooKeeper session, or it is in doubt while the connection is
	 * suspended (the thread still holds it and must unlock it)
	 * @throws IllegalArgumentException if {@code ttl} is not positive, or the key is {@code null}
	 * @throws InvalidLockPathException if the key's string is empty, or the lock path is too long
	 */
	@Override
	public void renewLock(Object lockKey, Duration ttl) {
		Objects.requireNonNull(ttl, "ttl must not be null");
		if (ttl.isNegative() || ttl.isZero()) {
			throw new IllegalArgumentException("A lock is renewed for a positive time to live, not " + ttl);
		}
		((ZkDistributedLock) obtain(lockKey)).renew(ttl);
	}

	/**
	 * Set the time to live of the locks taken without one ({@code lock()},
	 * {@code lockInterruptibly()}, {@code tryLock()}, {@code tryLock(time, unit)}) and of
	 * {@link #renewLock(Object)}. Applies to later grants.
	 * @param defaultTtl a positive time to live, zero (or {@link LockRequest#NO_CEILING}) for
	 * none, or {@code null} for the template's default {@code lockAtMostFor} (the initial setting)
	 * @throws IllegalArgumentException if it is negative
	 */
	public void setDefaultTtl(@Nullable Duration defaultTtl) {
		if (defaultTtl != null) {
			ZkDistributedLock.checkTtl(defaultTtl, "The default time to live (ttl)");
		}
		this.defaultTtl = defaultTtl;
	}

	/**
	 * Return the time to live of the locks taken without one: the one set with
	 * {@link #setDefaultTtl(Duration)}, else the template's default {@code lockAtMostFor}.
	 * @return the default time to live, zero for none
	 */
	public Duration getDefaultTtl() {
		Duration ttl = this.defaultTtl;
		if (ttl == null) {
			ttl = this.template.getDefaultLockAtMostFor();
		}
		// Spring Integration's spelling of none, whatever zk-lock's.
		return ZkDistributedLock.expires(ttl) ? ttl : Duration.ZERO;
	}

	/**
	 * Renew each grant taken with a time to live every third of it while it is held, on the given
	 * scheduler, so that a lock whose thread still works does not expire; the renewal stops when
	 * the grant is unlocked or lost, and skips its turns while the grant is in doubt. Applies to
	 * later grants.
	 * @param renewalTaskScheduler the scheduler, {@code null} to renew no more
	 */
	@Override
	public void setRenewalTaskScheduler(@Nullable TaskScheduler renewalTaskScheduler) {
		this.renewalTaskScheduler = renewalTaskScheduler;
	}

	@Nullable TaskScheduler getRenewalTaskScheduler() {
		return this.renewalTaskScheduler;
	}

	LockTemplate getTemplate() {
		return this.template;
	}

	/**
	 * Return the zk-lock key a lock key maps to: the key prefix, {@code /}, and the key's
	 * {@code toString()} encoded into one path segment. Sends no request and checks nothing
	 * beyond the string.
	 * @param lockKey the key
	 * @return the zk-lock key, below the root path, such as {@code /spring-integration/order-42}
	 * @throws IllegalArgumentException if the key is {@code null}
	 * @throws InvalidLockPathException if the key's string is {@code null} or empty
	 */
	public String keyFor(Object lockKey) {
		if (lockKey == null) {
			throw new IllegalArgumentException("lockKey must not be null");
		}
		String value = lockKey.toString();
		if (value == null || value.isEmpty()) {
			throw new InvalidLockPathException("Lock key " + lockKey.getClass().getName() + " gives "
					+ ((value == null) ? "a null" : "an empty") + " string: it cannot name a lock");
		}
		return this.keyPrefix + "/" + PathSegmentEncoder.encode(value);
	}

	/**
	 * Return the key prefix below the root path.
	 * @return the prefix, empty when keys live directly below the root path
	 */
	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	@Override
	public String toString() {
		return "ZkLockRegistry[keyPrefix=" + this.keyPrefix + "]";
	}

}
