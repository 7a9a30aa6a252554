package io.github.zklock.integration;

import java.util.Objects;
import java.util.concurrent.locks.Lock;

import org.springframework.integration.support.locks.LockRegistry;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockTemplate;
import io.github.zklock.expression.PathSegmentEncoder;

/**
 * Spring Integration's {@link LockRegistry} on zk-lock: {@link #obtain(Object)} returns
 * {@link LockTemplate#lock(String)} of the key, so that Spring Integration's users of a lock
 * registry ({@code LockRegistryLeaderInitiator}, {@code LockRequestHandlerAdvice}, aggregators,
 * the {@code executeLocked} methods) lock through zk-lock: same local queue, reentrancy,
 * observations and connection tracking as {@code @DistributedLock}.
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
 * Each {@code Lock} is a view of a reentrant EXCLUSIVE zk-lock on the key; views of equal keys
 * are equal and interchangeable (a lock taken through one is released through another), and
 * creating one sends no request, so nothing is cached here and nothing needs expiring (the
 * lock registry below caches Curator's recipes, bounded by its capacity). The methods:
 * <ul>
 * <li>{@code lock()} waits without limit and is not interruptible: an interrupt while waiting
 * is kept and restored once the lock is granted;</li>
 * <li>{@code lockInterruptibly()} waits without limit; {@code tryLock(time, unit)} waits at most
 * that long and returns {@code false} if another owner held the lock all that time; both throw
 * {@link InterruptedException} when interrupted, with no grant left behind;</li>
 * <li>{@code tryLock()} makes one attempt without waiting (no request at all when this thread
 * already holds the lock);</li>
 * <li>the lock is reentrant and bound to the thread that took it: each {@code lock()} or
 * successful {@code tryLock} must be matched by an {@code unlock()} in the same thread, which
 * releases that thread's latest grant; {@code unlock()} in a thread holding none throws
 * {@link IllegalMonitorStateException};</li>
 * <li>{@code newCondition()} throws {@link UnsupportedOperationException};</li>
 * <li>when ZooKeeper cannot be reached, the methods throw {@link LockException} (an unchecked
 * exception) instead of reporting a busy lock with {@code false};</li>
 * <li>a thread whose grant was lost with its ZooKeeper session gets {@link LockLostException}
 * from {@code lock()} and {@code tryLock} instead of a re-entry, until it has unlocked that
 * grant.</li>
 * </ul>
 *
 * <h2>Leader election</h2>
 * {@code LockRegistryLeaderInitiator} re-locks at each heartbeat and unlocks at once, so the
 * leader holds one grant, two for an instant, never more; its final {@code unlock()} on stop
 * deletes the lock znode. The re-lock is how a leader learns that its lock is gone: after the
 * session is lost it throws {@link LockLostException} and the initiator revokes leadership.
 * Until Curator reports the loss (the connection is suspended first, and the lock in doubt)
 * re-locks still succeed, so another candidate may lead for a moment before the old leader is
 * revoked, as with any lock on ZooKeeper; work that must never overlap checks a fencing token
 * ({@link LockTemplate} grants carry one).
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
 * <p>Thread-safe.
 */
public class ZkLockRegistry implements LockRegistry<Lock> {

	/** The key prefix used when none is given. */
	public static final String DEFAULT_KEY_PREFIX = "/spring-integration";

	private final LockTemplate template;

	private final String keyPrefix;

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
	 * Return the lock of a key: a view of the reentrant EXCLUSIVE zk-lock on
	 * {@link #keyFor(Object) keyFor(lockKey)}. Sends no request; the key is checked at once.
	 * @param lockKey the key; its {@code toString()} names the lock
	 * @return the lock, equal to every other lock of an equal key from this registry
	 * @throws IllegalArgumentException if the key is {@code null}
	 * @throws InvalidLockPathException if the key's string is empty, or the lock path is too long
	 */
	@Override
	public Lock obtain(Object lockKey) {
		String key = keyFor(lockKey);
		this.template.getRegistry().lockPath(key);
		return this.template.lock(key);
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
