package io.github.zklock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.zklock.LockMode;
import io.github.zklock.OnBusy;

/**
 * Runs the annotated method while holding a ZooKeeper lock on each key of {@link #path()}.
 *
 * <p><strong>Only calls through the Spring proxy are locked.</strong> A call from another method
 * of the same class ({@code this.purchase(sku)}, also from a lambda or a subclass) goes around
 * the proxy and runs the method <em>without</em> its lock, with no error. Call it through the bean
 * (from another bean, or through a reference to this bean's proxy). The application start logs a
 * warning for each such call it finds in the class's bytecode ("Self-invocation: ..."), and
 * {@link io.github.zklock.LockAssert#assertHeld() LockAssert.assertHeld()} as the method's first
 * statement turns a call without its lock into an {@code IllegalStateException} on the first call.
 *
 * <p>The lock is taken before the method runs and released in a {@code finally} block on the
 * same thread after it returns or throws; an exception thrown by the method propagates unchanged
 * after the release. When the lock is not acquired within the wait time the method is not invoked
 * and, by default, {@link io.github.zklock.LockAcquisitionException} is thrown ({@link #onBusy()}
 * can skip the call instead). The advice is ordered outside {@code @Transactional} by default
 * ({@code zk.lock.aspect-order}), so the lock is held until the transaction has committed or rolled
 * back.
 *
 * <p>Several keys make a multi-lock, as for a transfer between two accounts:
 * <pre class="code">
 * &#64;DistributedLock(path = { "/account/#{#from}", "/account/#{#to}" }, waitTime = "2s")
 * public void transfer(String from, String to, BigDecimal amount) { ... }
 * </pre>
 * Every key is taken in the one {@link #mode()}, in a canonical order (sorted by the keys' full
 * lock paths, duplicates merged) whatever the order they are written or resolved in, so that two
 * calls naming the same keys in opposite orders never deadlock. It is all or nothing: the
 * {@link #waitTime()} is one budget for all keys together, and when a key is not granted within it,
 * every key already taken is released before the method is skipped or the exception (naming the
 * busy key) is thrown. Every key is resolved before the first ZooKeeper request, so an illegal or
 * {@code null} value acquires nothing. Each key is reentrant and queued locally like a single-key
 * lock of it (a multi-lock inside a call that holds one of its keys re-enters that key), and is
 * observed in metrics under its own template. {@link io.github.zklock.LockContext#current()}
 * gives the handle of the set, whose {@link io.github.zklock.LockHandle#parts() parts} are each
 * key's grant, with its own fencing token. See {@link io.github.zklock.LockRequest#of(java.util.Collection)}.
 *
 * <p>Asynchronous methods: the lock is owned by its grant, not by a thread.
 * <ul>
 * <li>A method declared to return exactly {@code CompletionStage} or {@code CompletableFuture}
 * holds the lock from before it is invoked until the stage it returns completes (normally,
 * exceptionally or by cancellation); the caller gets a future that completes after the release,
 * with the stage's outcome (see
 * {@link io.github.zklock.AsyncLockTemplate#execute}).
 * The calling thread does not wait for ZooKeeper; an invalid key value still throws at call
 * time; what the method throws, checked or not, fails the future; a {@code null} stage completes
 * with {@code null}; {@link OnBusy#SKIP} completes with {@code null} (an empty {@code Optional}
 * for a stage of {@code Optional}); cancelling the caller's future cancels the work.</li>
 * <li>A method returning Reactor's {@code Mono} or {@code Flux} (reactor-core on the class path)
 * acquires on subscription, never on assembly: each subscription is its own grant and its own
 * invocation of the method, released on complete, error or cancel (a subscription cancelled
 * while waiting gives up the wait). {@link OnBusy#SKIP} completes empty.</li>
 * <li>A Kotlin {@code suspend} function holds the lock until it returns or throws, a function
 * returning a Kotlin {@code Flow} for each collection of the flow, as a {@code Mono} and a
 * {@code Flux} do (Spring's coroutine support in AOP runs a {@code suspend} function as a
 * publisher; kotlinx-coroutines-reactor and kotlin-reflect on the class path): cancelling the
 * calling coroutine gives up the wait, or ends the work and releases the grant.
 * {@link OnBusy#SKIP} returns {@code null} or an empty flow.</li>
 * <li>With interrupt-on-lost ({@code zk.lock.interrupt-on-lost}), a lost lock cancels the work
 * and fails the future or the publisher with {@link io.github.zklock.LockLostException}.</li>
 * <li>Not reentrant: a nested asynchronous call on a key its caller holds waits like any other
 * and fails with {@link io.github.zklock.LockAcquisitionException} after its wait time (give it a
 * finite one).</li>
 * <li>{@link io.github.zklock.LockContext#current()} sees the grant only while the method itself
 * runs (for a future; never for a {@code Mono} or {@code Flux}), not in later callbacks: use the
 * Reactor context ({@link io.github.zklock.reactive.ReactiveLockContext#current()}), or pass the handle
 * on.</li>
 * <li>The method body runs on the template's async executor
 * ({@link io.github.zklock.LockTemplateBuilder#asyncExecutor}: Boot's {@code applicationTaskExecutor}
 * when there is one), else on a grant thread; the lock waits and is held with no thread (see
 * {@link io.github.zklock.AsyncLockTemplate}).</li>
 * </ul>
 * Other asynchronous return types ({@code Future}, subclasses of {@code CompletableFuture},
 * {@code Flow.Publisher} and other Reactive Streams publishers) are rejected at start-up.
 *
 * <p>Durations ({@link #waitTime()}, {@link #lockAtLeastFor()}, {@link #lockAtMostFor()}) are
 * strings, as {@code @Scheduled(fixedDelayString)} takes them: ISO-8601 ({@code "PT2S"}), the
 * simple style ({@code "2s"}, {@code "500ms"}, {@code "1m"}), a plain number of milliseconds
 * ({@code "500"}), or a {@code ${...}} placeholder resolved at start-up
 * ({@code "${stock.lock-wait}"}). A value that is malformed, or negative other than
 * {@link #WAIT_FOREVER} for the wait time, fails the start naming the method. The rules between
 * the attributes are those of {@link io.github.zklock.LockRequest}, which the annotation is turned
 * into once per method.
 *
 * <p>Example: {@code @DistributedLock(path = "/stock/#{#sku}", waitTime = "2s")}.
 *
 * <p>The advice that honours it comes with the Spring Boot starter, or, in an application without
 * Spring Boot, with {@link EnableDistributedLocks @EnableDistributedLocks}.
 *
 * @see io.github.zklock.LockTemplate
 * @see DistributedSemaphore
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface DistributedLock {

	/**
	 * The value of {@link #waitTime()} that waits until the lock is granted, without limit:
	 * {@code "-1ms"}, the value of {@code LockRequest.WAIT_FOREVER} and of
	 * {@code zk.lock.default-wait-time=-1ms}.
	 */
	String WAIT_FOREVER = "-1ms";

	/**
	 * The value of {@link #lockAtMostFor()} that sets no ceiling, whatever
	 * {@code zk.lock.default-lock-at-most-for} says: {@code "none"}, read as
	 * {@code LockRequest.NO_CEILING}.
	 */
	String NO_CEILING = "none";

	/**
	 * The key or keys to lock, below {@code zk.lock.root-path}, each starting with {@code /}, for
	 * example {@code /orders/#{#orderId}}. Literal text must form a legal ZooKeeper path. Templates
	 * {@code #{...}} are SpEL expressions over the method arguments (by name, {@code #p0} or
	 * {@code #a0}), the target ({@code #root.target}) and beans ({@code @bean}); each value is
	 * encoded so that it stays inside one path segment ({@code a/b}, {@code .} and {@code ..}
	 * cannot add or climb segments). A {@code null} or empty value fails the call with
	 * {@link io.github.zklock.InvalidLockPathException} before any ZooKeeper request.
	 * <p>One key is a plain lock; several keys are a multi-lock on all of them (see the type's
	 * description). Every template is parsed and checked at start-up; an empty array is rejected
	 * there, naming the method.
	 * @return the key templates, at least one
	 */
	String[] path();

	/**
	 * The kind of lock.
	 * @return the lock mode
	 */
	LockMode mode() default LockMode.EXCLUSIVE;

	/**
	 * Whether the same thread may re-enter the lock it holds. Only meaningful for
	 * {@link LockMode#EXCLUSIVE}; READ and WRITE are always reentrant. With {@code false} a nested
	 * call on the same path in the same thread is not granted: it fails after its wait time, or at
	 * once when it would wait forever.
	 * @return whether the exclusive lock is reentrant
	 */
	boolean reentrant() default true;

	/**
	 * How long to wait for the lock, a duration string (see the type's description). Left out
	 * (empty), {@code zk.lock.default-wait-time} applies; {@code "0"} makes one attempt without
	 * waiting; {@link #WAIT_FOREVER} ({@code "-1ms"}) waits without limit. For several keys it is
	 * one budget for all of them together ({@code "0"}: one attempt per key).
	 * @return the wait time, empty for the default
	 */
	String waitTime() default "";

	/**
	 * What to do when the lock (for a multi-lock: any of its keys) stays busy for the whole wait
	 * time: {@link OnBusy#FAIL} throws {@link io.github.zklock.LockAcquisitionException},
	 * {@link OnBusy#SKIP} returns without invoking the method ({@code null}, or
	 * {@code Optional.empty()} for an {@code Optional} return type; rejected at start-up for a
	 * primitive return type other than {@code void}).
	 * @return what a busy lock does to the call
	 */
	OnBusy onBusy() default OnBusy.FAIL;

	/**
	 * How long the lock is kept at least, counted from its grant: when the method returns
	 * earlier, the lock is released once this time has passed since it was granted, by a
	 * scheduler thread (the calling thread returns at once). For a scheduled job on several
	 * instances, with {@link #onBusy()} {@code SKIP} and {@code waitTime = "0"}: an instance whose
	 * schedule fires a little later than the one that ran the tick finds the key still taken and
	 * skips, instead of running the same tick again.
	 * <pre class="code">
	 * &#64;Scheduled(cron = "0 0/5 * * * *")
	 * &#64;DistributedLock(path = "/jobs/report", waitTime = "0", onBusy = OnBusy.SKIP, lockAtLeastFor = "1m")
	 * public void report() { ... }
	 * </pre>
	 * <p>A duration string (see the type's description). Empty (the default) or zero: the lock is
	 * released when the method returns. A negative or malformed value is rejected at start-up,
	 * naming the method.
	 * <p>A lock kept after its method must not be bound to the calling thread, so a lock with
	 * {@code lockAtLeastFor} is a non-reentrant one whatever {@link #reentrant()} says (a nested
	 * call on the same key fails after its wait), as {@code LockRequest.withLockAtLeastFor} makes
	 * it; it is allowed for {@link LockMode#EXCLUSIVE} only (READ and WRITE locks are bound to
	 * their thread; rejected at start-up). For a multi-lock, all keys are kept together.
	 * <p>If the application dies while the lock is kept, the key is freed with its ZooKeeper
	 * session (after {@code zk.lock.session-timeout}), not at the end of {@code lockAtLeastFor}:
	 * unlike ShedLock, whose timestamp record survives a crash, nothing persists here. A holder
	 * that dies frees the key with its session; a live holder keeps it until its method returns, or
	 * until {@link #lockAtMostFor()} ends it, which must then not be shorter than this.
	 * @return the least time the lock is held, empty for none
	 */
	String lockAtLeastFor() default "";

	/**
	 * How long the lock may be held at most, counted from its grant: a ceiling for a holder that
	 * is stuck while its application runs (a hung remote call, a deadlocked thread, a loop that
	 * never ends). Once the lock has been held that long while the method still runs, this
	 * application ends the grant as a revocation does:
	 * <ul>
	 * <li>the grant becomes {@link io.github.zklock.LockState#LOST} with the reason "held longer
	 * than lockAtMostFor"; {@link io.github.zklock.LockStateListener}s and the
	 * {@link io.github.zklock.LockStateEvent} application event are told;</li>
	 * <li>the lock's znode is deleted, so the next waiter, in this application or another, is
	 * granted, with a higher {@linkplain io.github.zklock.LockHandle#fencingToken() fencing
	 * token}: a store fence ({@code JdbcLockFence}) rejects the stuck holder's later writes, and the
	 * commit guard rolls back the method's transaction if it commits after the ceiling;</li>
	 * <li>the method itself is not stopped: a blocking method runs on without the lock (its
	 * handle's {@link io.github.zklock.LockHandle#checkHeld() checkHeld()} and
	 * {@link io.github.zklock.LockHandle#fencingToken() fencingToken()} throw
	 * {@link io.github.zklock.LockLostException}), unless {@code zk.lock.interrupt-on-lost}
	 * interrupts its thread (a lock bound to the thread: reentrant EXCLUSIVE, READ, WRITE); an
	 * asynchronous method's work is cancelled and its result fails with
	 * {@code LockLostException}, whatever {@code zk.lock.interrupt-on-lost} says.</li>
	 * </ul>
	 * The method may move the ceiling while it works, with
	 * {@link io.github.zklock.LockHandle#extend(java.time.Duration) LockContext.require().extend(...)}.
	 * For a multi-lock the ceiling applies to each key's grant.
	 * <p>A duration string (see the type's description), measured by the holder's own clock. Left
	 * out (empty), {@code zk.lock.default-lock-at-most-for} applies (no ceiling unless set);
	 * {@link #NO_CEILING} ({@code "none"}) sets no ceiling whatever the default
	 * ({@code LockRequest.NO_CEILING}); a positive duration is the ceiling. Zero, a negative or
	 * malformed value, or one shorter than a positive {@link #lockAtLeastFor()}, is rejected at
	 * start-up, naming the method.
	 * <p>It covers a stuck holder in a running application only, since the holder's own process
	 * enforces it. A process frozen as a whole (a long garbage collection pause, a stopped VM) or
	 * dead cannot end its grant: its ZooKeeper session timeout ({@code zk.lock.session-timeout})
	 * frees the key instead, as without a ceiling, and the fencing token makes the store reject what
	 * it writes when it wakes up. Choose a ceiling well above the method's longest normal run: a
	 * holder still working at the ceiling loses its lock.
	 * @return the longest time the lock is held, empty for the default, {@link #NO_CEILING} for none
	 * @see io.github.zklock.LockRequest#withLockAtMostFor(java.time.Duration)
	 */
	String lockAtMostFor() default "";

}
