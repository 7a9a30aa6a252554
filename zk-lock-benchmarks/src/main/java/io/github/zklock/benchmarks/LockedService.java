package io.github.zklock.benchmarks;

import java.util.concurrent.CompletableFuture;

import io.github.zklock.LockContext;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.LockMode;

/**
 * A bean whose methods run under {@code @DistributedLock}, one per lock kind, each with a SpEL path
 * resolved on every call. The bodies are empty: the benchmarks measure the lock cycle. Each kind has
 * its own path template (the start-up check rejects one template used with two kinds).
 */
public class LockedService {

	/**
	 * Reentrant EXCLUSIVE ({@code InterProcessMutex}).
	 * @param key the key
	 */
	@DistributedLock(path = "/amutex/#{#key}")
	public void exclusive(String key) {
	}

	/**
	 * Reentrant EXCLUSIVE, reading the fencing token (one more request).
	 * @param key the key
	 * @return the fencing token
	 */
	@DistributedLock(path = "/amutex/#{#key}")
	public long exclusiveWithFencingToken(String key) {
		return LockContext.require().fencingToken();
	}

	/**
	 * Reentrant EXCLUSIVE, asynchronous: the method returns a completed future; the lock is taken
	 * and released by a grant thread of its own.
	 * @param key the key
	 * @return a completed future
	 */
	@DistributedLock(path = "/amutex/#{#key}")
	public CompletableFuture<Void> exclusiveAsync(String key) {
		return CompletableFuture.completedFuture(null);
	}

	/**
	 * READ side of a read/write lock.
	 * @param key the key
	 */
	@DistributedLock(path = "/arw/#{#key}", mode = LockMode.READ)
	public void read(String key) {
	}

	/**
	 * WRITE side of a read/write lock.
	 * @param key the key
	 */
	@DistributedLock(path = "/arw/#{#key}", mode = LockMode.WRITE)
	public void write(String key) {
	}

	/**
	 * Non-reentrant EXCLUSIVE (one-lease semaphore).
	 * @param key the key
	 */
	@DistributedLock(path = "/asem/#{#key}", reentrant = false)
	public void nonReentrant(String key) {
	}

	/**
	 * EXCLUSIVE on two keys at once (a multi-lock), given in either order.
	 * @param from the first key
	 * @param to the second key
	 */
	@DistributedLock(path = { "/amulti/#{#from}", "/amulti/#{#to}" })
	public void transfer(String from, String to) {
	}

	/**
	 * One permit of a semaphore of {@value RawCuratorState#PERMITS}.
	 * @param key the key
	 */
	@DistributedSemaphore(path = "/apermits/#{#key}", permits = RawCuratorState.PERMITS)
	public void permit(String key) {
	}

}
