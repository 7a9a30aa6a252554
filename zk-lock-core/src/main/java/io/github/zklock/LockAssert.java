package io.github.zklock;

/**
 * Asserts, from inside code that must only run under a lock, that it does: the twin of
 * ShedLock's {@code LockAssert.assertLocked()}.
 *
 * <p>Its main use is catching a missing proxy. A {@code @DistributedLock} method called from
 * another method of its own class ({@code this.purchase(...)}) bypasses the Spring proxy and runs
 * <em>without</em> its lock, silently; so does a method of a bean that is not proxied at all.
 * Calling {@link #assertHeld()} first thing in the method turns that into an exception on the
 * first call, in tests and in production:
 * <pre class="code">
 * &#64;DistributedLock(path = "/stock/#{#sku}")
 * public void purchase(String sku) {
 *     LockAssert.assertHeld();
 *     ...
 * }
 * </pre>
 *
 * <p>What counts is {@link LockContext}: the grants of {@link LockTemplate#execute} callbacks and
 * {@code @DistributedLock} / {@code @DistributedSemaphore} methods (also the synchronous part of
 * an asynchronous action) running on the current thread. A grant taken with
 * {@link LockTemplate#acquire} is not in it (its caller holds the handle), nor is the body of a
 * reactive ({@code Mono}/{@code Flux}) method, which finds its grant in the Reactor context.
 *
 * <p>Thread-safe: it only reads the current thread's {@link LockContext} and the innermost
 * grant's state; it sends no ZooKeeper request.
 */
public final class LockAssert {

	private static volatile boolean allAssertsPass;

	private LockAssert() {
	}

	/**
	 * Assert that the current thread runs under a grant that is still held.
	 * @throws IllegalStateException if the current thread runs under no lock at all (typically a
	 * {@code @DistributedLock} method invoked on {@code this} rather than through its proxy)
	 * @throws LockLostException if it runs under a grant that is in doubt or lost (see
	 * {@link LockHandle#checkHeld()})
	 */
	public static void assertHeld() {
		if (allAssertsPass) {
			return;
		}
		LockHandle handle = LockContext.current().orElseThrow(() -> new IllegalStateException(
				"This code must run under a distributed lock, but the current thread holds none: "
						+ "a @DistributedLock method called from its own class (this.method(...)) "
						+ "bypasses the proxy and runs unlocked; call it through the bean, "
						+ "or from a LockTemplate.execute callback"));
		handle.checkHeld();
	}

	/**
	 * For unit tests that call locked code without a lock infrastructure (no proxy, no ZooKeeper).
	 */
	public static final class TestHelper {

		private TestHelper() {
		}

		/**
		 * Make every {@link LockAssert#assertHeld()} pass, or restore the check. Global to the JVM:
		 * reset it after the test ({@code makeAllAssertsPass(false)}).
		 * @param pass whether every assertion passes
		 */
		public static void makeAllAssertsPass(boolean pass) {
			allAssertsPass = pass;
		}

	}

}
