package io.github.zklock.curator;

import java.time.Duration;
import java.util.Objects;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.zookeeper.data.Stat;

import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;

/**
 * One term of this instance's leadership of a group (see
 * {@link CuratorLeadership#term(String)}), as a {@link LockHandle} for a store fence: its
 * {@link #path()} is the group's latch path, the same for every term, and its
 * {@link #fencingToken()} the czxid of the {@code LeaderLatch} znode that leads. The recipe makes
 * the lowest sequence number lead, so every later leader's znode was created after this one: the
 * tokens of a group strictly increase from term to term, also when an instance whose session
 * expired joins again (its new znode is created later still).
 *
 * <p>Held while this instance leads the group with the same latch in the same session; LOST for
 * good once it stops (leadership yielded, lost with the session, in doubt, or the leadership
 * closed): a frozen leader that resumes finds its term lost as soon as the client has noticed,
 * and a write it makes before that carries its old token, which the store fence rejects once the
 * next leader has written. Thread-safe.
 */
final class LeadershipTerm implements LockHandle {

	private final LeaderGroup group;

	private final CuratorFramework client;

	private final LeaderLatch latch;

	private final String latchPath;

	private final String znodePath;

	private final long sessionInstance;

	/** The token once read; 0 before. */
	private volatile long czxid;

	LeadershipTerm(LeaderGroup group, CuratorFramework client, LeaderLatch latch, String latchPath, String znodePath,
			long sessionInstance) {
		this.group = group;
		this.client = client;
		this.latch = latch;
		this.latchPath = latchPath;
		this.znodePath = znodePath;
		this.sessionInstance = sessionInstance;
	}

	/** The group's latch path: the key a store fences the group's writes under. */
	@Override
	public String path() {
		return this.latchPath;
	}

	@Override
	public LockMode mode() {
		return LockMode.EXCLUSIVE;
	}

	@Override
	public boolean isHeld() {
		return this.group.isCurrent(this.latch, this.sessionInstance)
				&& Objects.equals(this.latch.getOurPath(), this.znodePath);
	}

	/** HELD while this term leads, else LOST: a term never comes back. */
	@Override
	public LockState state() {
		return isHeld() ? LockState.HELD : LockState.LOST;
	}

	@Override
	public void checkHeld() {
		if (!isHeld()) {
			throw new LockLostException(this.latchPath, LockMode.EXCLUSIVE,
					"this term of the leadership of group '" + this.group.name() + "' has ended");
		}
	}

	/**
	 * Return the czxid of the latch znode that leads: one {@code exists} on the first call, then
	 * cached. The znode must still be owned by the session the term was granted in.
	 * @throws LockLostException if the term has ended, or its znode is gone or owned by another
	 * session
	 * @throws io.github.zklock.LockException if ZooKeeper cannot be reached
	 */
	@Override
	public long fencingToken() {
		checkHeld();
		long token = this.czxid;
		if (token != 0) {
			return token;
		}
		Stat stat;
		long sessionId;
		try {
			stat = this.client.checkExists().forPath(this.znodePath);
			sessionId = this.client.getZookeeperClient().getZooKeeper().getSessionId();
		}
		catch (Exception ex) {
			throw ZooKeeperFailures.translate(ex,
					"Could not read the fencing token of the leadership of group '" + this.group.name() + "': ",
					this.client);
		}
		if (stat == null || stat.getEphemeralOwner() != sessionId) {
			throw new LockLostException(this.latchPath, LockMode.EXCLUSIVE, "the latch znode " + this.znodePath
					+ " of this term is " + ((stat == null) ? "gone" : "owned by another session"));
		}
		checkHeld();
		this.czxid = stat.getCzxid();
		return this.czxid;
	}

	/** Does nothing: a term ends when the leadership is yielded, lost or closed. */
	@Override
	public void release() {
	}

	/**
	 * Not supported: a term lasts as long as the leadership.
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		throw new UnsupportedOperationException("A leadership term lasts as long as the leadership: it cannot be kept");
	}

	@Override
	public String toString() {
		return "term of the leadership of group '" + this.group.name() + "' (" + this.znodePath + ")";
	}

}
