package io.github.zklock.curator;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link CuratorLockRegistry} hands a held exclusive lock to the next thread of the same
 * application waiting for the same key, without a ZooKeeper request: the lock znode stays at the
 * head of the queue while the threads of the application take their turns on it (a <em>chain</em>
 * of local grants). Applies to EXCLUSIVE (reentrant) and WRITE grants.
 *
 * <p>A chain ends, and the znode is deleted so that the next participant in ZooKeeper's queue is
 * granted, when no thread of the application waits for the key any more, or, while another
 * participant waits in ZooKeeper's queue (another application, or a READ of this one), once the
 * chain has made {@code maxGrants} grants or {@code maxTime} has passed since its znode was
 * granted, whichever comes first. With nobody else waiting a chain may go on.
 *
 * @param enabled whether to hand locks over locally; {@code false} restores one znode per grant
 * @param maxGrants the most grants of one chain while another participant waits, at least 1
 * @param maxTime the longest a chain may keep its znode while another participant waits, measured
 * from the znode's grant; positive
 */
public record LocalHandoff(boolean enabled, int maxGrants, Duration maxTime) {

	/** The default bound on the number of grants of a chain while another participant waits. */
	public static final int DEFAULT_MAX_GRANTS = 32;

	/** The default bound on the time a chain keeps its znode while another participant waits. */
	public static final Duration DEFAULT_MAX_TIME = Duration.ofMillis(50);

	/** Hand-off on with the default bounds. */
	public static final LocalHandoff DEFAULT = new LocalHandoff(true, DEFAULT_MAX_GRANTS, DEFAULT_MAX_TIME);

	/** Hand-off off: every grant creates and deletes a znode of its own. */
	public static final LocalHandoff DISABLED = new LocalHandoff(false, DEFAULT_MAX_GRANTS, DEFAULT_MAX_TIME);

	/**
	 * @throws IllegalArgumentException if {@code maxGrants} is below 1 or {@code maxTime} is not
	 * positive
	 * @throws NullPointerException if {@code maxTime} is {@code null}
	 */
	public LocalHandoff {
		Objects.requireNonNull(maxTime, "maxTime must not be null");
		if (maxGrants < 1) {
			throw new IllegalArgumentException("maxGrants must be at least 1, was " + maxGrants);
		}
		if (maxTime.isNegative() || maxTime.isZero()) {
			throw new IllegalArgumentException("maxTime must be positive, was " + maxTime);
		}
	}

}
