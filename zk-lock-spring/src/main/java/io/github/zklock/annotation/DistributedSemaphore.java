package io.github.zklock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.zklock.OnBusy;

/**
 * Runs the annotated method while holding one permit of a ZooKeeper semaphore on {@link #path()}:
 * at most {@link #permits()} calls of the key run at once across every application that uses it,
 * as for a rate-limited partner API or a pool of licences.
 *
 * <p>Only calls through the Spring proxy take a permit: a call from the same class runs without
 * one (see {@link DistributedLock} on self-invocation; the same start-up warning applies).
 *
 * <p>Backed by Curator's {@code InterProcessSemaphoreV2} on the key's lock path: the permit is a
 * lease znode below it, taken before the method runs and released in a {@code finally} block after
 * it returns or throws (an exception of the method propagates unchanged). When no permit is free
 * within the wait time the method is not invoked and, by default,
 * {@link io.github.zklock.LockAcquisitionException} is thrown ({@link #onBusy()} can skip the call
 * instead).
 *
 * <ul>
 * <li>Not reentrant: a nested call on the same key, even in the same thread, takes another permit
 * (and fails at once rather than wait forever when this thread holds them all).</li>
 * <li>One count per key: the first participant stores its {@link #permits()} with the key (in the
 * data of the key's znode); a participant naming another count fails each call with
 * {@link io.github.zklock.PermitsMismatchException} before it acquires anything. Two methods of one
 * application naming the same key template with different counts, or a semaphore and a
 * {@link DistributedLock @DistributedLock} on the same template, are rejected at start-up.</li>
 * <li>{@link io.github.zklock.LockContext#current()} gives the permit's handle; its
 * {@linkplain io.github.zklock.LockHandle#fencingToken() fencing token} is the {@code czxid} of
 * the lease znode. The permit is lost with the ZooKeeper session, like a lock.</li>
 * </ul>
 *
 * <p>Asynchronous methods follow the rules of {@code @DistributedLock}: a method returning exactly
 * {@code CompletionStage} or {@code CompletableFuture} holds its permit until the returned stage
 * completes; one returning Reactor's {@code Mono} or {@code Flux} takes a permit per
 * subscription, on subscription, and gives it back on complete, error or cancel, as a Kotlin
 * {@code suspend} function or {@code Flow} does; other
 * asynchronous return types are rejected at start-up. A method may not carry both annotations.
 *
 * <p>Example: {@code @DistributedSemaphore(path = "/partner/#{#partnerId}", permits = 4, waitTime = "2s")}.
 *
 * @see io.github.zklock.LockRequest#permit(String, int)
 * @see DistributedLock
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface DistributedSemaphore {

	/**
	 * The value of {@link #lockAtMostFor()} that sets no ceiling, whatever
	 * {@code zk.lock.default-lock-at-most-for} says: {@code "none"}, as
	 * {@link DistributedLock#NO_CEILING}.
	 */
	String NO_CEILING = DistributedLock.NO_CEILING;

	/**
	 * The key of the semaphore, below {@code zk.lock.root-path}, starting with {@code /}: a
	 * template with {@code #{...}} SpEL expressions, with the rules of
	 * {@link DistributedLock#path()}.
	 * @return the key template
	 */
	String path();

	/**
	 * How many holders the semaphore lets in at once, across every application; at least
	 * {@code 1} (checked at start-up, naming the method). Every participant must name the same
	 * number for a key.
	 * @return the number of permits
	 */
	int permits();

	/**
	 * How long to wait for a free permit, a duration string with the values and rules of
	 * {@link DistributedLock#waitTime()}: left out (empty), {@code zk.lock.default-wait-time}
	 * applies; {@code "0"} makes one attempt; {@link DistributedLock#WAIT_FOREVER} waits without
	 * limit.
	 * @return the wait time, empty for the default
	 */
	String waitTime() default "";

	/**
	 * What to do when no permit is free for the whole wait time: {@link OnBusy#FAIL} throws
	 * {@link io.github.zklock.LockAcquisitionException}, {@link OnBusy#SKIP} returns without
	 * invoking the method.
	 * @return what a full semaphore does to the call
	 */
	OnBusy onBusy() default OnBusy.FAIL;

	/**
	 * How long the permit may be held at most, counted from its grant, with the values, rules and
	 * effects of {@link DistributedLock#lockAtMostFor()}: once it has been held that long, this
	 * application ends it as a revocation does (it becomes {@link io.github.zklock.LockState#LOST}
	 * with the reason "held longer than lockAtMostFor", listeners and the
	 * {@link io.github.zklock.LockStateEvent} application event are told, the commit guard rolls back
	 * a transaction that commits after it) and deletes its lease znode, so that the next waiter gets
	 * the permit. The method is not stopped; an asynchronous method's work is cancelled and its
	 * result fails with {@link io.github.zklock.LockLostException}. A frozen or dead process frees
	 * its permit with its session instead.
	 * <p>A duration string (see {@link DistributedLock}): left out (empty),
	 * {@code zk.lock.default-lock-at-most-for} applies (no ceiling unless set); {@link #NO_CEILING}
	 * ({@code "none"}) sets no ceiling; a positive duration is the ceiling; zero, a negative or
	 * malformed value is rejected at start-up, naming the method.
	 * @return the longest time the permit is held, empty for the default, {@link #NO_CEILING} for none
	 * @see io.github.zklock.LockRequest#withLockAtMostFor(java.time.Duration)
	 */
	String lockAtMostFor() default "";

}
