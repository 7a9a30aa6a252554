package io.github.zklock.sample.queue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;

import io.github.zklock.LockTemplate;
import io.github.zklock.sample.SampleProperties;
import io.github.zklock.sample.queue.OrderQueueRepository.QueuedItem;

/**
 * Bounded queues of orders shared by every instance: a producer adds an item while the queue holds
 * fewer than {@code sample.queue.capacity}, a consumer takes the oldest, each waiting for the other
 * on the distributed {@link Condition} of the queue's lock, as a producer and a consumer in one JVM
 * wait on a {@code ReentrantLock}'s condition.
 *
 * <p>The lock is the EXCLUSIVE {@link Lock} view of {@code /orders/queue/<name>}
 * ({@link LockTemplate#lock(String)}), and its {@code newCondition()} is the key's one condition,
 * the same in every instance. Waiting for room and waiting for an item are two states on one
 * condition, so each change wakes every waiter ({@link Condition#signalAll()}), and each waiter
 * checks its own state again in a loop, as {@code Condition} requires (a wake-up may also be
 * spurious). {@link Condition#awaitNanos(long)} releases the lock while it waits, after queueing the
 * waiter in ZooKeeper, so that no signal sent once the lock is free is missed; it returns holding
 * the lock. The items are rows of {@code order_queue}, written with single auto-committed
 * statements under the lock, before the signal: a woken waiter takes the lock after the signaller
 * released it, and reads what it wrote.
 *
 * <p>Every call is bounded by the wait it is given, the lock's included ({@code tryLock}); a call
 * whose time runs out changes nothing. The condition has no fence: a holder paused past its
 * session could take an item another consumer takes too. (The purchases show the fence; the demo
 * runs the queue without pauses.) The calling thread blocks: waiting for the lock, in the waits,
 * and for each ZooKeeper request of them.
 */
@Service
public class OrderQueueService {

	/** The lock key of a queue is this prefix and its name. */
	public static final String LOCK_PREFIX = "/orders/queue/";

	private static final Log logger = LogFactory.getLog(OrderQueueService.class);

	private final LockTemplate locks;

	private final OrderQueueRepository items;

	private final int capacity;

	private final String instanceId;

	private final AtomicInteger waiting = new AtomicInteger();

	/**
	 * Create the service.
	 * @param locks the lock template, whose lock views give the conditions
	 * @param items the queues' table
	 * @param properties the queues' capacity
	 * @param sample the instance id, recorded with each item added
	 */
	public OrderQueueService(LockTemplate locks, OrderQueueRepository items, OrderQueueProperties properties,
			SampleProperties sample) {
		if (properties.getCapacity() < 1) {
			throw new IllegalArgumentException(
					"sample.queue.capacity must be at least 1, was " + properties.getCapacity());
		}
		this.locks = locks;
		this.items = items;
		this.capacity = properties.getCapacity();
		this.instanceId = sample.getInstanceId();
	}

	/**
	 * Add an item at the end of a queue, waiting while the queue is full.
	 * @param queue the queue's name: one lock path segment
	 * @param item the item
	 * @param maxWait the longest wait, for the lock and for room
	 * @return the outcome: added, or not when the time ran out (nothing changed)
	 * @throws InterruptedException if interrupted while waiting (nothing added)
	 * @throws io.github.zklock.LockLostException if the lock was lost while waiting (nothing added)
	 * @throws io.github.zklock.LockException if ZooKeeper could not serve the lock or the condition
	 */
	public Put put(String queue, String item, Duration maxWait) throws InterruptedException {
		long deadline = System.nanoTime() + maxWait.toNanos();
		Lock lock = this.locks.lock(LOCK_PREFIX + queue);
		if (!lock.tryLock(maxWait.toNanos(), TimeUnit.NANOSECONDS)) {
			return new Put(queue, item, false, -1, this.capacity, 0, this.instanceId);
		}
		int waits = 0;
		try {
			Condition changed = lock.newCondition();
			int depth;
			while ((depth = this.items.count(queue)) >= this.capacity) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return new Put(queue, item, false, depth, this.capacity, waits, this.instanceId);
				}
				waits++;
				await(changed, left);
			}
			this.items.add(queue, item, this.instanceId, System.currentTimeMillis());
			changed.signalAll();
			return new Put(queue, item, true, depth + 1, this.capacity, waits, this.instanceId);
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Take the oldest item of a queue, waiting while the queue is empty.
	 * @param queue the queue's name: one lock path segment
	 * @param maxWait the longest wait, for the lock and for an item
	 * @return the outcome: the item, or none when the time ran out (nothing changed)
	 * @throws InterruptedException if interrupted while waiting (nothing taken)
	 * @throws io.github.zklock.LockLostException if the lock was lost while waiting (nothing taken)
	 * @throws io.github.zklock.LockException if ZooKeeper could not serve the lock or the condition
	 */
	public Take take(String queue, Duration maxWait) throws InterruptedException {
		long deadline = System.nanoTime() + maxWait.toNanos();
		Lock lock = this.locks.lock(LOCK_PREFIX + queue);
		if (!lock.tryLock(maxWait.toNanos(), TimeUnit.NANOSECONDS)) {
			return new Take(queue, null, null, -1, 0, this.instanceId);
		}
		int waits = 0;
		try {
			Condition changed = lock.newCondition();
			QueuedItem oldest;
			while ((oldest = this.items.oldest(queue).orElse(null)) == null) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return new Take(queue, null, null, -1, waits, this.instanceId);
				}
				waits++;
				await(changed, left);
			}
			if (!this.items.remove(oldest.id())) {
				// Under the lock nobody else removes it: answered all the same, so that the caller's
				// audit counts the item twice.
				logger.warn("Item " + oldest.item() + " of queue " + queue + " was removed by another consumer");
			}
			long age = System.currentTimeMillis() - oldest.enqueuedAtMillis();
			changed.signalAll();
			return new Take(queue, oldest.item(), oldest.producer(), age, waits, this.instanceId);
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * Return how many calls of this instance wait on a queue's condition now, counted from just
	 * before each wait: by the time another caller is granted the queue's lock, each of them is
	 * queued on the condition (it queues before it lets the lock go).
	 * @return the number of waiting calls
	 */
	public int waiting() {
		return this.waiting.get();
	}

	private void await(Condition changed, long nanos) throws InterruptedException {
		this.waiting.incrementAndGet();
		try {
			changed.awaitNanos(nanos);
		}
		finally {
			this.waiting.decrementAndGet();
		}
	}

	/**
	 * The outcome of {@link #put}.
	 *
	 * @param queue the queue's name
	 * @param item the item
	 * @param added whether it was added: {@code false} when the time ran out
	 * @param depth how many items the queue held after the call, -1 when the lock was not granted
	 * @param capacity the most the queue holds
	 * @param waits how many times the producer waited on the condition
	 * @param instance the instance that served the call
	 */
	public record Put(String queue, String item, boolean added, int depth, int capacity, int waits,
			String instance) {
	}

	/**
	 * The outcome of {@link #take}.
	 *
	 * @param queue the queue's name
	 * @param item the item taken, {@code null} when the time ran out
	 * @param producer the instance that added it, {@code null} without an item
	 * @param ageMillis how long the item waited in the queue, from its producer's clock when it was
	 * added to this instance's when it was taken (both the host's clock when the instances share a
	 * host), -1 without an item
	 * @param waits how many times the consumer waited on the condition
	 * @param instance the instance that served the call
	 */
	public record Take(String queue, @Nullable String item, @Nullable String producer, long ageMillis, int waits,
			String instance) {
	}

}
