package io.github.zklock.shedlock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockRequest;
import io.github.zklock.LockTemplate;
import io.github.zklock.OnBusy;
import io.github.zklock.expression.PathSegmentEncoder;

/**
 * ShedLock's {@link LockProvider} on zk-lock: a ShedLock lock is a non-reentrant EXCLUSIVE
 * zk-lock grant, whose ephemeral znode frees the lock when its holder's ZooKeeper session ends.
 * An application using ShedLock ({@code @EnableSchedulerLock}, {@code @SchedulerLock},
 * {@code LockingTaskExecutor}) switches to it by replacing its {@code LockProvider} bean:
 *
 * <pre class="code">
 * &#64;Bean
 * LockProvider lockProvider(LockTemplate lockTemplate) {
 * 	return new ZkLockProvider(lockTemplate);
 * }
 * </pre>
 *
 * <h2>Keys and znodes</h2>
 * A lock name maps to the zk-lock key {@code <keyPrefix>/<segment>}, where the segment is the
 * name {@link PathSegmentEncoder encoded} into exactly one path segment ({@code /}, {@code %},
 * control characters and a few other ranges percent-encoded, everything else kept, {@code .}
 * and {@code ..} encoded): {@code "report/daily"} becomes {@code /shedlock/report%2Fdaily}. The
 * lock's znode is that key below the lock registry's root path ({@code zk.lock.root-path}), for
 * example {@code /locks/shedlock/report%2Fdaily}, and Curator's lease znodes live below it. The
 * default prefix is {@value #DEFAULT_KEY_PREFIX}. A
 * {@code @DistributedLock(path = "/shedlock/#{#name}", reentrant = false)} (or a non-reentrant
 * EXCLUSIVE {@link LockRequest}) with the same string names the same lock; any other kind of
 * lock on that key (reentrant, READ/WRITE, a semaphore) keeps other znodes and does not exclude
 * it.
 *
 * <h2>lockAtMostFor and lockAtLeastFor</h2>
 * <ul>
 * <li><b>{@code lockAtMostFor} is a ceiling on the grant</b>
 * ({@link LockRequest#withLockAtMostFor(Duration)}), as the "locked until" time of ShedLock's own
 * providers: once the lock has been held that long, the holder's own application ends the grant,
 * even while the job still runs. The grant becomes {@code LOST} with the reason "held longer
 * than lockAtMostFor", zk-lock's lost-lock listeners
 * ({@code CuratorLockRegistry.addLockStateListener}, the {@code LockStateEvent} application
 * event) are told, and its znode is deleted at once, so that another application can lock the
 * name. The job itself is not stopped (nor does ShedLock stop it), and its later unlock is
 * quiet. A holder that dies frees the lock earlier, with its ZooKeeper session (after the session
 * timeout); a holder whose whole process is frozen cannot run its ceiling, and its session frees
 * the lock instead. A zero {@code lockAtMostFor}, which ShedLock's store-based providers take as
 * a lock that expires at once, sets no ceiling here ({@link LockRequest#NO_CEILING}): the lock is
 * then held until it is unlocked or its holder's session ends.</li>
 * <li><b>{@code lockAtLeastFor} does not survive a crash.</b> An unlock asked for before
 * {@code lockAtLeastFor} has passed since the grant is carried out later by a scheduler thread
 * ({@link LockRequest#withLockAtLeastFor(Duration)}), so that no other instance runs the same
 * tick; but if the holder's session ends meanwhile (the application died or was cut off for
 * longer than the session timeout), the key frees with it, where ShedLock's persistent
 * timestamp would keep it until {@code lockAtLeastFor} has passed. The time is counted from the
 * grant, not from the configuration's {@code createdAt}: at most as much later as the attempt
 * took. A kept grant's ceiling is moved past its delayed release, so that a job configured with
 * both times equal ends as released, not as expired.</li>
 * </ul>
 *
 * <h2>How else it differs from ShedLock's own providers</h2>
 * <ul>
 * <li><b>A grant lost while the job runs does not stop the job.</b> When the session is lost
 * the grant's {@link LockHandle#state()} becomes {@code LOST} and zk-lock's lost-lock listeners
 * are told, as when the ceiling ends it. {@code zk.lock.interrupt-on-lost} does not interrupt the
 * job's thread: the grant is not bound to it and may be kept after the job (lockAtLeastFor) while
 * the thread runs other work.</li>
 * <li><b>ZooKeeper down is an exception, never "busy".</b> {@link #lock(LockConfiguration)}
 * throws {@link LockException} when ZooKeeper cannot serve the attempt; ShedLock's executors let
 * it propagate, so the run fails visibly instead of being skipped as if another instance held
 * the lock.</li>
 * </ul>
 * It does not meet ShedLock's own ZooKeeper provider ({@code ZookeeperCuratorLockProvider},
 * persistent znodes holding a timestamp): the two never exclude each other, even on one path.
 * Switch every instance of an application at once, or accept that a job may run once in each
 * world during the switch.
 *
 * <h2>Extension</h2>
 * The provider is an {@link ExtensibleLockProvider}: {@code LockExtender.extendActiveLock} and
 * ShedLock's {@code KeepAliveLockProvider} (which extends a lock every half of its
 * {@code lockAtMostFor}) work. An extension moves the grant's ceiling to its
 * {@code lockAtMostFor} from now ({@link LockHandle#extend(Duration)}) and hands the grant on to a
 * new lock; its {@code lockAtLeastFor} is counted from the extension, added to what the grant
 * already keeps. A lock whose {@code lockAtMostFor} has passed, or whose grant was lost with its
 * session or is in doubt while the connection is suspended, is not extended: the extension
 * returns empty (ShedLock's extender then throws {@code LockCanNotBeExtendedException} in the
 * job) and the grant is let go.
 *
 * <h2>Metrics</h2>
 * Attempts and holds are observed as every zk-lock grant when the template has an observation
 * registry: {@code zk.lock.acquire} with outcome {@code acquired}, or {@code skipped} when the
 * lock is busy (ShedLock skips the run; the one attempt has a zero wait), as for
 * {@code @DistributedLock(onBusy = SKIP)}, or {@code error}; {@code zk.lock.held} while it is
 * held, ended with outcome {@code released}, {@code expired} (ended by its
 * {@code lockAtMostFor}) or {@code lost}. Their {@code name} tag is
 * {@value #METRICS_NAME_PREFIX}{@code <lock name>}, with the lock name unencoded: ShedLock's
 * names are few and fixed, one per scheduled job, so the tag stays low-cardinality (a caller that
 * builds lock names from data through a {@code LockingTaskExecutor} makes one tag value per
 * name).
 *
 * <p>Thread-safe. The returned locks are not bound to a thread: ShedLock unlocks on the thread
 * that locked, but any thread may.
 */
public class ZkLockProvider implements ExtensibleLockProvider {

	/** The key prefix used when none is given. */
	public static final String DEFAULT_KEY_PREFIX = "/shedlock";

	/** What the name of a grant in metrics and observations starts with, followed by the lock name. */
	public static final String METRICS_NAME_PREFIX = "shedlock:";

	private final LockTemplate template;

	private final String keyPrefix;

	/**
	 * Create a provider whose locks live below {@value #DEFAULT_KEY_PREFIX}.
	 * @param template the template that grants the locks
	 */
	public ZkLockProvider(LockTemplate template) {
		this(template, DEFAULT_KEY_PREFIX);
	}

	/**
	 * Create a provider whose locks live below the given key prefix.
	 * @param template the template that grants the locks
	 * @param keyPrefix a zk-lock key such as {@code /jobs/shedlock} (starting with {@code /},
	 * without a trailing {@code /}), or the empty string for keys directly below the root path
	 * @throws InvalidLockPathException if the prefix is not empty and not a legal key
	 */
	public ZkLockProvider(LockTemplate template, String keyPrefix) {
		this.template = Objects.requireNonNull(template, "template must not be null");
		Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
		if (!keyPrefix.isEmpty()) {
			// Validates without a request.
			template.getRegistry().lockPath(keyPrefix);
		}
		this.keyPrefix = keyPrefix;
	}

	/**
	 * Make one attempt, without waiting, at the lock of {@link LockConfiguration#getName()}: a
	 * non-reentrant EXCLUSIVE grant of {@link #keyFor(String) keyFor(name)} kept for at least
	 * {@link LockConfiguration#getLockAtLeastFor()} after it was granted, and ended by this
	 * application once it has been held for {@link LockConfiguration#getLockAtMostFor()} (zero for
	 * no such end), whatever the template's default {@code lockAtMostFor}. A name already locked
	 * by this provider (in any thread) or by another application is busy. Sends the requests of
	 * one attempt (about seven for a free lock); may be called from any thread.
	 * @param lockConfiguration the lock's name and times
	 * @return the lock, which the caller must {@link SimpleLock#unlock() unlock}; empty when
	 * another owner holds it
	 * @throws LockException if ZooKeeper cannot serve the attempt (never reported as empty: a
	 * run that cannot know whether another instance holds the lock fails instead of skipping), or
	 * the thread was interrupted
	 * @throws InvalidLockPathException if the name, encoded, makes a lock path longer than the
	 * registry allows
	 */
	@Override
	public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
		Objects.requireNonNull(lockConfiguration, "lockConfiguration must not be null");
		String name = lockConfiguration.getName();
		LockRequest request = LockRequest.of(keyFor(name))
			.withReentrant(false)
			.withWaitTime(Duration.ZERO)
			.withOnBusy(OnBusy.SKIP)
			.withLockAtLeastFor(lockConfiguration.getLockAtLeastFor())
			.withLockAtMostFor(lockAtMostFor(lockConfiguration.getLockAtMostFor()))
			.withName(METRICS_NAME_PREFIX + name);
		return this.template.tryAcquire(request)
			.map((handle) -> new ZkSimpleLock(handle, name));
	}

	/**
	 * The ceiling of a ShedLock {@code lockAtMostFor}: the same, or none for zero (ShedLock accepts
	 * zero, and zk-lock spells none {@link LockRequest#NO_CEILING}).
	 */
	private static Duration lockAtMostFor(Duration lockAtMostFor) {
		return lockAtMostFor.isZero() ? LockRequest.NO_CEILING : lockAtMostFor;
	}

	/**
	 * Return the zk-lock key a lock name maps to: the key prefix, {@code /}, and the name encoded
	 * into one path segment. Sends no request and checks nothing beyond the string.
	 * @param lockName a ShedLock lock name
	 * @return the zk-lock key, below the root path, such as {@code /shedlock/report}
	 * @throws InvalidLockPathException if the name is {@code null} or empty
	 */
	public String keyFor(String lockName) {
		if (lockName == null || lockName.isEmpty()) {
			throw new InvalidLockPathException("A ShedLock lock name must not be " + ((lockName == null) ? "null"
					: "empty"));
		}
		return this.keyPrefix + "/" + PathSegmentEncoder.encode(lockName);
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
		return "ZkLockProvider[keyPrefix=" + this.keyPrefix + "]";
	}

}
