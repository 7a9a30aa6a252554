package io.github.zklock.curator;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * A grant this application holds, as an operator sees it ({@link CuratorLockAdmin#describeHeldLocks()}).
 *
 * @param path the full znode path of the lock
 * @param mode the mode it was granted in
 * @param state where it stands
 * @param holder the name of the thread that acquired it
 * @param since when it was granted
 * @param node the grant's lock znode
 * @param fencingToken its fencing token if it is known without a request, else {@code null}
 * @param chainLength how many grants its znode has served so far, this one included: 1 for a
 * grant made through ZooKeeper, more when the znode was handed over locally from grant to grant
 * (see {@link LocalHandoff})
 * @param deadline when its ceiling ({@code lockAtMostFor}) ends it, by this application's clock;
 * {@code null} without one
 */
public record HeldLock(String path, LockMode mode, LockState state, String holder, Instant since, String node,
		@Nullable Long fencingToken, int chainLength, @Nullable Instant deadline) {

	/**
	 * A grant without a ceiling.
	 * @param path the full znode path of the lock
	 * @param mode the mode it was granted in
	 * @param state where it stands
	 * @param holder the name of the thread that acquired it
	 * @param since when it was granted
	 * @param node the grant's lock znode
	 * @param fencingToken its fencing token if known, else {@code null}
	 * @param chainLength how many grants its znode has served so far
	 */
	public HeldLock(String path, LockMode mode, LockState state, String holder, Instant since, String node,
			@Nullable Long fencingToken, int chainLength) {
		this(path, mode, state, holder, since, node, fencingToken, chainLength, null);
	}

}
