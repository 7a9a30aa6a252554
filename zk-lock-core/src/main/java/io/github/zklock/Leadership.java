package io.github.zklock;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Leader election among the instances of an application, per named group: in each group at most
 * one participant leads at a time, the others wait in a queue and the next one leads when the
 * leader gives up, closes, or loses its ZooKeeper session. The algorithm is the "Leader Election"
 * recipe of the ZooKeeper recipes page as Apache Curator's {@code LeaderLatch} implements it: each
 * participant creates an ephemeral sequential znode below the group's path, the lowest sequence
 * number leads, every other participant watches only its predecessor (no herd effect).
 *
 * <p>Leadership is only as sure as the connection: while the connection is suspended (leadership
 * in doubt: the session may have expired on the server and another participant be leading
 * already) or after the session was lost, this instance does not lead, whatever Curator's
 * {@code ConnectionStateErrorPolicy} says. It leads again when the connection comes back with the
 * same session and its znode is still first; after a new session it queues again at the back.
 * Changes are told to {@link LeadershipListener}s as {@link LeadershipGrantedEvent} and
 * {@link LeadershipRevokedEvent}.
 *
 * <p>A group is joined (this instance starts taking part) by the first call naming it, and stays
 * joined until the leadership is closed. Group names are non-empty single ZooKeeper path segments:
 * no {@code /}, not {@code .} or {@code ..}, no character ZooKeeper refuses in a node name.
 *
 * <p>Thread-safe.
 */
public interface Leadership {

	/**
	 * Return whether this instance leads the group now. Joins the group if it has not joined yet,
	 * so the first call usually returns {@code false} (the election runs in the background; use
	 * {@link #awaitLeadership(String, Duration)} to wait for it). Local state, no ZooKeeper
	 * request; {@code false} while the connection is suspended or lost, and once the leadership
	 * was closed (an instance shutting down leads nothing; it does not join then).
	 * @param group the group name
	 * @return whether this instance leads the group
	 * @throws IllegalArgumentException if the group name is {@code null}, empty or not a single
	 * legal ZooKeeper path segment
	 */
	boolean isLeader(String group);

	/**
	 * Return this instance's current term of leadership of the group, for a store fence: a
	 * {@link LockHandle} whose {@link LockHandle#path() path} is the same for every term of the
	 * group and whose {@link LockHandle#fencingToken() fencing token} is higher for every later
	 * leader, so that a store that rejects lower tokens (such as zk-lock-spring's
	 * {@code JdbcLockFence}) rejects the writes of a leader that was paused past its session and
	 * resumed after another took over. The handle is {@link LockState#HELD} while this term leads
	 * and {@link LockState#LOST} for good afterwards; releasing it does nothing (leadership ends
	 * with {@link #yieldLeadership(String)}). Joins the group if it has not joined yet. Local
	 * state: no ZooKeeper request (the token may need one when first asked for).
	 *
	 * <p>The default returns empty: an implementation without fencing tokens.
	 * @param group the group name
	 * @return the term, empty when this instance does not lead the group (or the leadership was
	 * closed)
	 * @throws IllegalArgumentException if the group name is not valid (see {@link #isLeader(String)})
	 */
	default Optional<LockHandle> term(String group) {
		return Optional.empty();
	}

	/**
	 * Wait until this instance leads the group, at most for the timeout. Joins the group if it has
	 * not joined yet.
	 * @param group the group name
	 * @param timeout how long to wait at most; {@link Duration#ZERO} checks once without waiting
	 * @return whether this instance leads the group, {@code false} if the timeout passed first or
	 * the leadership was closed while waiting
	 * @throws IllegalArgumentException if the timeout is negative, or the group name is not valid
	 * (see {@link #isLeader(String)})
	 * @throws IllegalStateException if the leadership was closed before the call
	 * @throws InterruptedException if the thread is interrupted while waiting
	 */
	boolean awaitLeadership(String group, Duration timeout) throws InterruptedException;

	/**
	 * Give the leadership of the group up, if this instance holds it (also while it is in doubt),
	 * and join again at the back of the queue: another participant, if there is one, leads next;
	 * alone, this instance leads again. {@link #isLeader(String)} is {@code false} before this
	 * instance's znode is deleted, and listeners are told of the revocation on the calling thread
	 * before this method returns (unless another thread is telling them of an earlier change of the
	 * group at that moment: it then tells them of this one right after). Nothing happens if this
	 * instance does not lead the group or has not joined it (the call does not join).
	 * @param group the group name
	 * @throws IllegalArgumentException if the group name is not valid (see {@link #isLeader(String)})
	 * @throws IllegalStateException if the leadership was closed
	 */
	void yieldLeadership(String group);

	/**
	 * Return the participant id of the group's leader as ZooKeeper shows it now: the owner of the
	 * first znode in the group's queue, of whichever instance. Reads ZooKeeper (one
	 * {@code getChildren}, then a {@code getData} per znode until one still exists); does not join
	 * the group. Right after a hand-over the named participant may not know yet that it leads.
	 * @param group the group name
	 * @return the leader's participant id, empty if no participant is in the group
	 * @throws IllegalArgumentException if the group name is not valid (see {@link #isLeader(String)})
	 * @throws IllegalStateException if the leadership was closed
	 * @throws LockException if ZooKeeper cannot answer (unreachable, access denied, interrupted):
	 * never an empty result for "ZooKeeper down"
	 */
	Optional<String> getLeader(String group);

	/**
	 * Return the groups this instance has joined, whether it leads them or not.
	 * @return a snapshot of the joined groups, empty once the leadership is closed
	 */
	Set<String> getGroups();

	/**
	 * Return the id under which this instance takes part in every group: the data of its znodes,
	 * and what {@link #getLeader(String)} returns on every instance while this one leads.
	 * @return this instance's participant id
	 */
	String getParticipantId();

}
