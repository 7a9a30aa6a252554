package io.github.zklock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One grant of a ZooKeeper lock, returned by {@link LockTemplate#acquire} and passed to a
 * {@link LockCallback}.
 *
 * <p>Thread rules: a grant of a reentrant request (EXCLUSIVE reentrant, READ, WRITE) is bound to
 * the thread that acquired it and must be released on that thread; a non-reentrant EXCLUSIVE
 * grant and a permit of a semaphore may be released from any thread, and so may every
 * {@link AsyncLockHandle}. {@link #isHeld()}, {@link #checkHeld()}, {@link #path()},
 * {@link #mode()}, {@link #parts()} and {@link #fencingToken()} may be called from any thread.
 *
 * <p>A multi-lock (a request of several keys) is one handle made of one grant per key: its
 * {@link #parts()} give each key's path and fencing token; {@link #path()} and
 * {@link #fencingToken()} answer for its first part.
 */
public interface LockHandle extends AutoCloseable {

	/**
	 * Return the full znode path of the lock (root path included), for example
	 * {@code /locks/stock/42}. The lock's own sequential znodes live below it. For a multi-lock,
	 * the path of its first {@linkplain #parts() part} (the first in canonical order); ask the
	 * parts for the others.
	 * @return the lock path
	 */
	String path();

	/**
	 * Return the mode the lock was granted in.
	 * @return the lock mode
	 */
	LockMode mode();

	/**
	 * Return whether this grant still holds the lock. {@code false} once the handle is released,
	 * while the ZooKeeper connection is suspended (the lock is in doubt), and for good once the
	 * session is lost. Answers from local state: sends no ZooKeeper request.
	 * @return whether the lock is held
	 */
	boolean isHeld();

	/**
	 * Return where this grant stands: {@link LockState#HELD}, {@link LockState#IN_DOUBT} while the
	 * connection is suspended, {@link LockState#LOST} once the session is lost, or
	 * {@link LockState#RELEASED}. Local state, no ZooKeeper request.
	 * @return the state
	 */
	LockState state();

	/**
	 * Throw unless the lock is held. Use it before an action that must not run without the lock.
	 * Sends no ZooKeeper request.
	 * @throws LockLostException if the connection is suspended or the session was lost
	 * @throws IllegalStateException if the handle was already released
	 */
	void checkHeld();

	/**
	 * Return the fencing token of this grant: the {@code czxid} (creation transaction id) of the
	 * grant's lock znode. It strictly increases with each exclusive grant of the same path across
	 * the whole ensemble, also after the server reaps an empty container parent and the path is
	 * created again (unlike the sequence suffix, which restarts). Pass it to a store that rejects
	 * writes carrying a lower token than one it has seen.
	 *
	 * <p>An EXCLUSIVE (reentrant) grant knows its token from the create of its znode: no request.
	 * For the other kinds the first call sends one {@code exists} request; later calls return the
	 * cached value. Nested (reentrant) grants of the same znode return the same token, and so do
	 * grants handed over locally on one znode (one application's grants of a hot key taking turns
	 * on one znode, see {@code LocalHandoff}): tokens of one key are then non-decreasing, and a
	 * store must reject only a token lower than the highest it has seen. A permit of a semaphore has the token of its lease znode. A multi-lock has one token
	 * per key: this is its first part's (the token of {@link #path()}); pass each key's store the
	 * token of that key's {@linkplain #parts() part}.
	 * @return the fencing token, a positive number
	 * @throws LockLostException if the lock znode no longer exists or the lock is not held
	 * @throws LockException if ZooKeeper cannot be reached
	 * @throws IllegalStateException if the handle was already released
	 */
	long fencingToken();

	/**
	 * Return the grants this handle is made of: for a multi-lock, one per key in the order they
	 * were acquired (sorted by path), each with its own {@link #path()} and
	 * {@link #fencingToken()}; for any other grant, this handle alone. Release the multi-lock, not
	 * its parts.
	 * @return the parts, never empty
	 */
	default List<LockHandle> parts() {
		return List.of(this);
	}

	/**
	 * Release this grant. For a nested (reentrant) grant only the hold count drops; the lock znode
	 * is deleted when the outermost grant is released. A multi-lock releases its parts in reverse
	 * order. When another request of this application waits for the key, it is granted on the
	 * same znode at once (local hand-off), within its bounds. Calling it again has no effect.
	 * <p>The lock znode is deleted with Curator's guaranteed delete; a synchronous grant's release
	 * returns once ZooKeeper answered it, at most the client's connection timeout, and at once when
	 * the client is not connected (an {@link AsyncLockHandle}'s {@code releaseAsync()} returns at
	 * once). When ZooKeeper cannot be reached meanwhile, the failure is logged, not thrown, and the
	 * handle is released: the znode
	 * stays, so no other client is granted the lock, until the guaranteed delete removes it after the
	 * connection is back, or until the session ends and the ephemeral znode goes with it.
	 * @throws IllegalStateException if a thread-bound grant is released from another thread
	 */
	void release();

	/**
	 * Return a view of this grant whose {@link #release()}, when asked for before
	 * {@code lockAtLeastFor} has passed from now, is carried out then by a scheduler thread, as for
	 * a request {@linkplain LockRequest#withLockAtLeastFor(Duration) with lockAtLeastFor} (counted
	 * from its grant there): for keeping a grant longer once it is held, such as a job that
	 * extends its lock as ShedLock's {@code SimpleLock.extend} does. Views compose: the grant is
	 * released once every view's time has passed. A grant that is lost is released at once. A
	 * ceiling ({@link #extend(Duration)}) that would fall before the delayed release is moved to a
	 * second after it, so that a kept grant ends as released, not as lost. Sends no request.
	 * @param lockAtLeastFor how long from now the grant is kept at least; zero returns this handle
	 * @return the view, whose {@code release()} returns at once
	 * @throws IllegalArgumentException if {@code lockAtLeastFor} is negative
	 * @throws IllegalStateException if the grant is bound to its thread (a synchronous grant of a
	 * reentrant request), whose release another thread cannot carry out
	 * @throws UnsupportedOperationException if the handle does not come from a template (the
	 * default of this method: a registry's own grants are kept by the template that wraps them)
	 */
	default LockHandle keepAtLeast(Duration lockAtLeastFor) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot be kept after its release");
	}

	/**
	 * Move this grant's ceiling ({@link LockRequest#withLockAtMostFor(Duration) lockAtMostFor}) to
	 * {@code lockAtMostFor} from now, or set one on a grant that had none: for long work that
	 * reports progress, as ShedLock's {@code SimpleLock.extend} and {@code KeepAliveLockProvider}
	 * do. The twin of {@link #keepAtLeast(Duration)}, which moves the floor. A multi-lock moves the
	 * ceiling of every part. Any thread may call it, also for a grant bound to its thread. Sends no
	 * request.
	 * @param lockAtMostFor how long from now the grant may still be held, positive;
	 * {@link LockRequest#NO_CEILING} removes the ceiling
	 * @return this handle
	 * @throws IllegalArgumentException if {@code lockAtMostFor} is not positive
	 * @throws LockLostException if the grant is no longer held: lost (with its session, revoked, or
	 * ended by its ceiling, which an extension cannot undo) or in doubt while the connection is
	 * suspended
	 * @throws IllegalStateException if the grant was already released
	 * @throws UnsupportedOperationException if the grant comes from a {@link io.github.zklock.spi.LockRegistry} that
	 * enforces no ceiling (the default of this method)
	 */
	default LockHandle extend(Duration lockAtMostFor) {
		throw new UnsupportedOperationException(getClass().getName() + " enforces no lockAtMostFor");
	}

	/**
	 * Return when this grant's ceiling ends it ({@link LockRequest#withLockAtMostFor(Duration)},
	 * {@link #extend(Duration)}), by the local clock. For a multi-lock, the earliest of its parts'.
	 * Local state.
	 * @return the deadline, empty when the grant has no ceiling
	 */
	default Optional<Instant> deadline() {
		return Optional.empty();
	}

	/**
	 * Same as {@link #release()}, for try-with-resources.
	 */
	@Override
	default void close() {
		release();
	}

}
