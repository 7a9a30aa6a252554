package io.github.zklock.curator;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A lock znode below a lock path, from any client of the ensemble, in queue order
 * ({@link CuratorLockAdmin#describeParticipants(String)}).
 *
 * @param node the znode name
 * @param path the znode's full path
 * @param kind {@code EXCLUSIVE}, {@code READ}, {@code WRITE}, {@code EXCLUSIVE (reentrant = false)}
 * or {@code PERMIT (of N)}
 * @param fencingToken its creation transaction id, the fencing token of its grant
 * @param created when it was created: the grant time of a holder that got the lock at once, else
 * when it started to wait
 * @param sessionId the session that owns it, in hexadecimal
 * @param owner the data stored in it: {@code <pid>@<host>} for this library's znodes, the
 * client's IP address for raw Curator's by default
 * @param pid the owner's process id, {@code null} if the data is not this library's
 * @param host the owner's host name, {@code null} if the data is not this library's
 * @param holder whether it holds the lock (by the rules of its recipe: the first of a mutex's
 * queue, a leading WRITE or every READ before the first WRITE, the first N leases of a
 * semaphore of N permits), else it waits
 * @param chainLength for a znode this application holds, how many grants it has served so far
 * (more than 1 when handed over locally, see {@link LocalHandoff}); {@code null} for other
 * applications' znodes and waiting ones
 */
public record LockParticipant(String node, String path, String kind, long fencingToken, Instant created,
		String sessionId, String owner, @Nullable Long pid, @Nullable String host, boolean holder,
		@Nullable Integer chainLength) {

	LockParticipant withChainLength(@Nullable Integer chainLength) {
		return new LockParticipant(this.node, this.path, this.kind, this.fencingToken, this.created, this.sessionId,
				this.owner, this.pid, this.host, this.holder, chainLength);
	}

}
